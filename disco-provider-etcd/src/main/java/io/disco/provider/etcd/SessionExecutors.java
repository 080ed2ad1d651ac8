package io.disco.provider.etcd;

import io.disco.core.internal.SessionThread;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A session's two {@linkplain SessionThread threads}: the lease timer ({@code disco-lease-<lease>}),
 * which runs renewal and the expiry check and nothing else, so that no service work can delay them;
 * and the worker ({@code disco-session-<lease>}), which runs the request timers and the services'
 * state machines: those in their serial {@link SessionContext}, on the worker or, when the context is
 * idle, on the thread that hands them over.
 */
final class SessionExecutors {

    /** Renewal and the expiry check only. */
    final ScheduledThreadPoolExecutor leaseTimer;
    /** The services' state machines and their request timers. */
    final ScheduledThreadPoolExecutor worker;
    /** The services' serial context, on the worker or, idle, on the submitting thread. */
    final SessionContext context;

    /**
     * @param leaseHex the lease id in hex, which names the threads
     * @param session what the session is called in log messages
     */
    SessionExecutors(String leaseHex, String session) {
        this.leaseTimer = SessionThread.newExecutor("disco-lease-" + leaseHex);
        this.worker = SessionThread.newExecutor("disco-session-" + leaseHex);
        this.context = new SessionContext(worker, session);
    }

    /** Runs {@code task} in the session's context ({@link SessionContext#execute}); dropped silently once the session is shut down. */
    void runOnSession(Runnable task) {
        context.execute(task);
    }

    /**
     * Runs {@code task} in the session's context after {@code delay}; null once the session is shut
     * down. A timer that fires after the shutdown runs its task on the worker itself, as timers always did.
     */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return schedule(worker, inContext(task), unit.toNanos(delay));
    }

    /** {@code task} run in the session's context, or directly once the context is shut down (see {@link #schedule}). */
    Runnable inContext(Runnable task) {
        return () -> {
            if (!context.runHere(task)) {
                task.run();
            }
        };
    }

    /** Runs {@code task} on {@code exec} after {@code delayNanos}; null once it is shut down. */
    static ScheduledFuture<?> schedule(ScheduledThreadPoolExecutor exec, Runnable task, long delayNanos) {
        try {
            return exec.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    static void cancel(ScheduledFuture<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }

    /** Stops both threads: the lease timer at once, the worker once its queued tasks have run. */
    void shutdown() {
        leaseTimer.shutdownNow();
        worker.shutdown();
    }
}
