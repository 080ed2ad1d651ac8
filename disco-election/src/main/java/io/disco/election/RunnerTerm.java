package io.disco.election;

import io.disco.fencing.FencingToken;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One term of an {@link ElectionLeadershipRunner}, as its task sees it. Its end is decided once (the first {@link #stop} wins), and in
 * this order: the end is recorded ({@link #isActive()}, {@link #end()}), the task's thread is
 * interrupted if the task is running and the end is not its return, and only then is
 * {@link #ended()} completed, so that no wait of the task can return normally on the end
 * (issue 36). The interrupt is sent under {@link #guard}, which the task's return also takes, so
 * it never lands after {@link #leave} (and the thread ends there: the next term's task runs on a
 * new thread).
 */
final class RunnerTerm implements LeaderTerm {

    /** Where the term's task is: it moves forward only, one step at a time. */
    private enum TaskState {
        NOT_STARTED,
        RUNNING,
        RETURNED
    }

    final Leadership leadership;
    final CompletableFuture<End> ended = new CompletableFuture<>();
    private final Object guard = new Object();
    /** The end, once decided; written under {@link #guard}. */
    private volatile End end;
    /** Guarded by {@link #guard}. */
    private TaskState state = TaskState.NOT_STARTED;

    volatile Throwable failure;
    /** The thread running this term's task; set before it starts. */
    volatile Thread task;

    RunnerTerm(Leadership leadership) {
        this.leadership = leadership;
    }

    private void move(TaskState from, TaskState to) {
        if (state != from) {
            throw new IllegalStateException(
                    "term " + leadership.token() + ": task " + state + ", expected " + from + " for " + to);
        }
        state = to;
    }

    /** On the task's thread, before the task: a term that ended before its task started interrupts it now. */
    void enter() {
        synchronized (guard) {
            move(TaskState.NOT_STARTED, TaskState.RUNNING);
            if (end != null) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * On the task's thread, once the task returned ({@code failure} null) or threw: no interrupt
     * is sent from here on. Ends the term as COMPLETED or FAILED unless it had ended.
     *
     * @return whether the task's return ended the term
     */
    boolean leave(Throwable failure) {
        synchronized (guard) {
            move(TaskState.RUNNING, TaskState.RETURNED);
        }
        Thread.interrupted(); // an interrupt that landed after the task returned is nobody's: this thread ends
        if (failure != null) {
            this.failure = failure;
        }
        return stop(failure == null ? End.COMPLETED : End.FAILED);
    }

    /** Ends the term with {@code end} unless it has ended; returns whether this call ended it. */
    boolean stop(End end) {
        synchronized (guard) {
            if (this.end != null) {
                return false;
            }
            this.end = end;
            if (state == TaskState.RUNNING) {
                task.interrupt(); // before ended completes: every wait of the task sees the end
            }
        }
        ended.complete(end);
        return true;
    }

    @Override
    public Leadership leadership() {
        return leadership;
    }

    @Override
    public FencingToken token() {
        return leadership.token();
    }

    @Override
    public boolean isActive() {
        return end == null;
    }

    @Override
    public CompletionStage<End> ended() {
        return ended.minimalCompletionStage();
    }

    @Override
    public Optional<End> end() {
        return Optional.ofNullable(end);
    }

    @Override
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before awaiting the end of term " + leadership.token());
        }
        try {
            ended.get(Timeouts.nanos(timeout), TimeUnit.NANOSECONDS);
            if (Thread.interrupted()) {
                // the end's interrupt landed while the wait was already returning the end (CompletableFuture keeps
                // the flag and returns): the task's wait must not return normally on the end
                throw new InterruptedException("term " + leadership.token() + " ended");
            }
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "LeaderTerm[" + leadership + ", " + end().map(Enum::name).orElse("active") + "]";
    }
}
