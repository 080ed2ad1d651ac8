package io.disco.election;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One term of a {@link LeadershipRunner}'s leadership, as its {@link LeaderTask} sees it.
 *
 * <p>The term is active from the moment the task starts until the first of: the lease is lost or the
 * leader key deleted (signalled no later than the election's {@code done()}), the runner is asked to
 * {@linkplain LeadershipRunner#relinquish() relinquish} or is closed, or the task returns. Once it has
 * ended, {@link #ended()} is complete and {@link #end()} says why; the task's thread is also
 * interrupted when the end did not come from the task itself.
 */
public interface LeaderTerm extends Fenced {

    /** Why a term ended. */
    enum End {
        /** The lease was lost or the leader key deleted: another candidate may lead already. */
        LOST,
        /** {@link LeadershipRunner#relinquish()} stepped down so that another candidate can lead. */
        RELINQUISHED,
        /** The runner was closed. */
        CLOSED,
        /** The task returned normally. */
        COMPLETED,
        /** The task threw. */
        FAILED
    }

    /** @return this term's leadership (key, value, token) */
    Leadership leadership();

    /** @return this term's fencing token: the same as {@code leadership().token()} */
    @Override
    FencingToken token();

    /** @return whether the term is still active (it may end at any moment) */
    boolean isActive();

    /**
     * Completes once, on the term's end, with why it ended; never exceptionally.
     *
     * @return the end of this term
     */
    CompletionStage<End> ended();

    /** @return why the term ended, or empty while it is active */
    Optional<End> end();

    /**
     * Waits until the term ends or the timeout passes.
     *
     * @param timeout the longest wait
     * @return whether the term has ended
     * @throws InterruptedException if the thread was interrupted (as it is when the term ends)
     */
    boolean awaitEnd(Duration timeout) throws InterruptedException;
}
