package io.disco.core.internal.session;

import io.disco.core.internal.Callbacks;
import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Where a session's work runs, for the providers whose session is one thread and a pool of workers (ZooKeeper,
 * Redis): the session's thread ({@code <prefix>-session-<id>}, a {@link SessionThread}: the liveness checks and
 * renewals, the backend's events and answers handed over, the services' reactions to them, the releases' retries;
 * never user code), the workers ({@code <prefix>-worker-<id>-N}: the waiting acquisitions and
 * the asynchronous calls) and the callback executor, where every future handed to the user completes.
 */
public final class SessionExecutors {

    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final Callbacks callbacks;

    /**
     * @param prefix the backend's prefix of thread names ({@code disco-zk}, {@code disco-redis})
     * @param hex the session id in hex, which names the threads
     * @param callbackExecutor where user futures complete; null for disco's default pool
     */
    public SessionExecutors(String prefix, String hex, Executor callbackExecutor) {
        this.callbacks = new Callbacks(callbackExecutor);
        this.timer = SessionThread.newExecutor(prefix + "-session-" + hex);
        AtomicInteger count = new AtomicInteger();
        this.workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, prefix + "-worker-" + hex + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** @return the session's thread, as an executor (the backend's events and answers are handed to it) */
    public ScheduledThreadPoolExecutor sessionThread() {
        return timer;
    }

    /**
     * Runs {@code task} on the session's thread; on this thread once the session's thread is shut down.
     *
     * @param task the work
     */
    public void onSessionThread(Runnable task) {
        try {
            timer.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /**
     * Runs {@code task} on the session's thread after {@code delay}.
     *
     * @param task the work
     * @param delay how long to wait first
     * @param unit the unit of {@code delay}
     * @return the scheduled task
     * @throws RejectedExecutionException once the session's thread is shut down (the session ended)
     */
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return timer.schedule(task, delay, unit);
    }

    /**
     * Runs {@code task} on the session's thread every {@code periodNanos}, the first time after one period.
     *
     * @param task the work
     * @param periodNanos the period, in nanoseconds
     * @return the scheduled task
     */
    public ScheduledFuture<?> every(Runnable task, long periodNanos) {
        return timer.scheduleAtFixedRate(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs {@code task} on a worker.
     *
     * @param task the work
     * @throws RejectedExecutionException once the workers are shut down (the session ended)
     */
    public void work(Runnable task) {
        workers.execute(task);
    }

    /**
     * Runs {@code task} on a worker; the future completes on the callback executor.
     *
     * @param task the work
     * @return its outcome
     */
    public CompletableFuture<Void> inBackground(Runnable task) {
        return supplyInBackground(() -> {
            task.run();
            return null;
        });
    }

    /**
     * Runs {@code task} on a worker; the future completes on the callback executor.
     *
     * @param <T> the result
     * @param task the work
     * @return its outcome
     */
    public <T> CompletableFuture<T> supplyInBackground(Supplier<T> task) {
        UserFuture<T> user = new UserFuture<>(callbacks.executor(), null);
        Runnable run = () -> {
            Throwable error = null;
            T result = null;
            try {
                result = task.get();
            } catch (Throwable t) {
                error = t;
            }
            Throwable e = error;
            T r = result;
            callbacks.deliver(() -> user.answer(r, e));
        };
        try {
            workers.execute(run);
        } catch (RejectedExecutionException e) {
            callbacks.deliver(run);
        }
        return user;
    }

    /**
     * Runs {@code task} on the callback executor (see {@link Callbacks#deliver}).
     *
     * @param task the work
     */
    public void deliver(Runnable task) {
        callbacks.deliver(task);
    }

    /** @return where user code runs */
    public Callbacks callbacks() {
        return callbacks;
    }

    /** @return where user futures complete */
    public Executor callbackExecutor() {
        return callbacks.executor();
    }

    /** Stops the session's thread and the workers, once their queued tasks have run. */
    public void shutdown() {
        timer.shutdown();
        workers.shutdown();
    }
}
