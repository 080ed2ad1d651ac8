package io.disco.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where user code runs: a session's callback executor (the user's choice, or a shared pool of daemon
 * threads named {@code disco-callback-N} that grows as needed, so that one blocking callback delays no
 * other), never a {@linkplain SessionThread session thread}. For providers.
 */
public final class Callbacks {

    private final Executor executor;

    /** @param executor the user's callback executor, or null for the default pool */
    public Callbacks(Executor executor) {
        this.executor = executor == null ? DefaultPool.POOL : executor;
    }

    /** The default callback executor. */
    private static final class DefaultPool {
        private static final AtomicInteger COUNT = new AtomicInteger();
        static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "disco-callback-" + COUNT.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Runs user-facing work (completing a future the user holds, so its dependent stages) on the
     * callback executor, never on a session thread: a task that the executor would run on one (a
     * direct executor) goes to the default pool instead, and so does a task it rejects.
     *
     * @param task the work
     */
    public void deliver(Runnable task) {
        Runnable guarded = () -> {
            if (SessionThread.onSessionThread()) {
                DefaultPool.POOL.execute(task);
            } else {
                task.run();
            }
        };
        try {
            executor.execute(guarded);
        } catch (RejectedExecutionException e) {
            DefaultPool.POOL.execute(task);
        }
    }

    /** @return where user-facing futures complete: the default for {@code *Async} stages of those futures */
    public Executor executor() {
        return executor;
    }
}
