package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waiting for one answer of Redis, bounded: a Redis that does not answer is a timeout, never a hang. */
final class Calls {

    private Calls() {}

    /**
     * Waits for {@code f} at most {@code timeout}.
     *
     * @param where the server, for the message
     * @param doing what the request was, for the message
     * @throws InterruptedException if interrupted meanwhile
     * @throws TimeoutException if no answer came in time
     * @throws DiscoException if Redis answered with an error
     */
    static <T> T await(CompletionStage<T> f, Duration timeout, String where, String doing)
            throws InterruptedException, TimeoutException {
        Future<T> future = f.toCompletableFuture();
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof DiscoException d) {
                throw d;
            }
            throw new DiscoException(where + " failed while " + doing + ": " + cause, cause);
        }
    }

    /**
     * {@link #await} for a caller that cannot be interrupted and has no timeout of its own: a timeout and an
     * interruption are failures (the interruption is kept in the thread's status).
     *
     * @throws DiscoException if no answer came in time, Redis answered with an error, or the thread was interrupted
     */
    static <T> T get(CompletionStage<T> f, Duration timeout, String where, String doing) {
        try {
            return await(f, timeout, where, doing);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while " + doing + " at " + where, e);
        } catch (TimeoutException e) {
            throw new DiscoException(where + " did not answer within " + timeout.toMillis() + " ms while " + doing, e);
        }
    }
}
