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
 * {@linkplain LeadershipRunner#relinquish() relinquish} or is closed, or the task returns.
 *
 * <h2>How the end reaches the task</h2>
 * The end is decided once, and made known in this order:
 * <ol>
 *   <li>{@link #isActive()} turns false and {@link #end()} says why;</li>
 *   <li>if the end is not the task's own return, the task's thread is interrupted (also when the
 *       task itself called {@code relinquish()} or {@code close()}: that call returns with the
 *       thread's interrupt flag set);</li>
 *   <li>{@link #ended()} completes, and {@link #awaitEnd} returns {@code true} from then on.</li>
 * </ol>
 * So every interruptible wait the task is in at the end ({@link #awaitEnd}, {@code Thread.sleep},
 * {@code BlockingQueue.take}, {@code Object.wait}, ...), or enters later without having cleared its
 * interrupt flag, throws {@link InterruptedException}; a call of {@link #awaitEnd} on the task's
 * thread never returns normally on the end while the flag is set. If the term ended before its task
 * started, the task starts with its thread interrupted. The interrupt is never sent after the task
 * has returned, and every term's task runs on a new thread, so an interrupt meant for one term never
 * reaches another term's work. A task that clears the interrupt and carries on keeps its term (and
 * the runner) until it returns; {@link #isActive()}, {@link #ended()} and {@link #awaitEnd} still
 * tell it the term is over.
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
     * @param timeout the longest wait, not null; zero or less: no wait; too long to count in nanoseconds: no limit
     *     (the rule of {@link io.disco.fencing.Timeouts})
     * @return whether the term has ended ({@link #ended()} is complete)
     * @throws InterruptedException if the thread's interrupt flag was set on entry or it was
     *     interrupted while waiting; on the task's thread that is how the term's end shows (see the
     *     class comment), the flag is cleared, and {@link #end()} says why the term ended
     * @throws NullPointerException if {@code timeout} is null
     */
    boolean awaitEnd(Duration timeout) throws InterruptedException;
}
