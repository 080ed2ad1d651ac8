package io.disco.provider.zookeeper;

import io.disco.core.internal.UserFuture;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * Where a queue service's work runs off the caller's thread: on the session's timer (the service's own
 * reactions to ZooKeeper's events, never user code) or on a worker whose answer reaches the user on the
 * callback executor.
 */
final class SessionTasks {

    private SessionTasks() {
    }

    /** Runs {@code task} on the session's timer thread; on this thread once the timer is shut down. */
    static void onSessionThread(ZooKeeperSession session, Runnable task) {
        try {
            session.timer().execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    static CompletableFuture<Void> inBackground(ZooKeeperSession session, Runnable task) {
        return supplyInBackground(session, () -> {
            task.run();
            return null;
        });
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    static <T> CompletableFuture<T> supplyInBackground(ZooKeeperSession session, Supplier<T> task) {
        UserFuture<T> user = new UserFuture<>(session.callbacks().executor(), null);
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
            session.callbacks().deliver(() -> user.answer(r, e));
        };
        try {
            session.workers().execute(run);
        } catch (RejectedExecutionException e) {
            session.callbacks().deliver(run);
        }
        return user;
    }
}
