package io.disco.provider.etcd;

import io.disco.core.SessionThread;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's two {@linkplain SessionThread threads}: the lease timer ({@code disco-lease-<lease>}),
 * which runs renewal and the expiry check and nothing else, so that no service work can delay them;
 * and the worker ({@code disco-session-<lease>}), which runs the services' state machines and their
 * request timers.
 */
final class SessionExecutors {

    private static final Logger LOG = LoggerFactory.getLogger(SessionExecutors.class);

    /** Renewal and the expiry check only. */
    final ScheduledThreadPoolExecutor leaseTimer;
    /** The services' state machines and their request timers. */
    final ScheduledThreadPoolExecutor worker;
    private final String session;

    /**
     * @param leaseHex the lease id in hex, which names the threads
     * @param session what the session is called in log messages
     */
    SessionExecutors(String leaseHex, String session) {
        this.leaseTimer = SessionThread.newExecutor("disco-lease-" + leaseHex);
        this.worker = SessionThread.newExecutor("disco-session-" + leaseHex);
        this.session = session;
    }

    /** Runs {@code task} on the worker; dropped silently once the session is shut down. */
    void runOnSession(Runnable task) {
        try {
            worker.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("session {} is shut down; dropped a task", session);
        }
    }

    /** Runs {@code task} on the worker after {@code delay}; null once the session is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return schedule(worker, task, unit.toNanos(delay));
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
