package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
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
     * {@link #await} without waiting: {@code f}'s outcome, handed to {@code handOver} (never completed on the thread
     * that answers, a Lettuce event loop), failed with a {@link DiscoException} if Redis answered with an error or
     * did not answer within {@code timeout}.
     *
     * @param where the server, for the message
     * @param doing what the request was, for the message
     * @param handOver where the returned future completes
     * @return the answer, bounded
     */
    static <T> CompletableFuture<T> within(
            CompletionStage<T> f, Duration timeout, String where, String doing, Executor handOver) {
        CompletableFuture<T> out = new CompletableFuture<>();
        f.toCompletableFuture()
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete((v, e) -> handOver.execute(() -> {
                    if (e == null) {
                        out.complete(v);
                        return;
                    }
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (cause instanceof DiscoException d) {
                        out.completeExceptionally(d);
                    } else if (cause instanceof TimeoutException) {
                        out.completeExceptionally(new DiscoException(
                                where + " did not answer within " + timeout.toMillis() + " ms while " + doing, cause));
                    } else {
                        out.completeExceptionally(
                                new DiscoException(where + " failed while " + doing + ": " + cause, cause));
                    }
                }));
        return out;
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
