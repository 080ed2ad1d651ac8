package io.disco.provider.redis;

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
 * Where a session's work runs: the session's thread ({@code disco-redis-session-<id>}, a {@link SessionThread}: the
 * liveness checks, the renewal rounds and the deadline, the services. reactions to Redis. answers and messages, the
 * releases' retries; never user code), the workers ({@code disco-redis-worker-<id>-N}: the waiting acquisitions and
 * the asynchronous calls) and the callback executor, where every future handed to the user completes.
 */
final class SessionExecutors {

    private final ScheduledThreadPoolExecutor timer;
    private final ExecutorService workers;
    private final Callbacks callbacks;

    /**
     * @param hex the Redis session id in hex, which names the threads
     * @param callbackExecutor where user futures complete; null for disco's default pool
     */
    SessionExecutors(String hex, Executor callbackExecutor) {
        this.callbacks = new Callbacks(callbackExecutor);
        this.timer = SessionThread.newExecutor("disco-redis-session-" + hex);
        AtomicInteger count = new AtomicInteger();
        this.workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "disco-redis-worker-" + hex + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** @return the session's thread, as an executor (Lettuce's answers are handed to it) */
    ScheduledThreadPoolExecutor sessionThread() {
        return timer;
    }

    /** Runs {@code task} on the session's thread; on this thread once the session's thread is shut down. */
    void onSessionThread(Runnable task) {
        try {
            timer.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /**
     * Runs {@code task} on the session's thread after {@code delay}.
     *
     * @throws RejectedExecutionException once the session's thread is shut down (the session ended)
     */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        return timer.schedule(task, delay, unit);
    }

    /** Runs {@code task} on the session's thread every {@code period} nanoseconds, the first time after one period. */
    ScheduledFuture<?> every(Runnable task, long periodNanos) {
        return timer.scheduleAtFixedRate(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs {@code task} on a worker.
     *
     * @throws RejectedExecutionException once the workers are shut down (the session ended)
     */
    void work(Runnable task) {
        workers.execute(task);
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    CompletableFuture<Void> inBackground(Runnable task) {
        return supplyInBackground(() -> {
            task.run();
            return null;
        });
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    <T> CompletableFuture<T> supplyInBackground(Supplier<T> task) {
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

    /** Runs {@code task} on the callback executor (see {@link Callbacks#deliver}). */
    void deliver(Runnable task) {
        callbacks.deliver(task);
    }

    /** @return where user code runs */
    Callbacks callbacks() {
        return callbacks;
    }

    /** @return where user futures complete */
    Executor callbackExecutor() {
        return callbacks.executor();
    }

    /** Stops the session's thread and the workers, once their queued tasks have run. */
    void shutdown() {
        timer.shutdown();
        workers.shutdown();
    }
}
