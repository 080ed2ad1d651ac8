package io.disco.core.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * A future handed to the user: completed on the callback executor (so the user's dependent stages
 * never run on a session thread), with that executor as the default of its {@code *Async} stages.
 * Cancelling it, or completing it exceptionally, gives up the claim behind it, unless the claim
 * has already committed, in which case it returns false and the grant arrives as usual. For
 * providers: a provider completes it with {@link #answer}, through {@link Callbacks#deliver}.
 *
 * @param <T> the answer's type
 */
public final class UserFuture<T> extends CompletableFuture<T> {

    private final Executor executor;
    private final CompletableFuture<T> source;

    /**
     * @param executor the callback executor: the default of the {@code *Async} stages
     * @param source the internal future behind it, which a cancellation or a failure by the user is
     *     passed to; null when there is none (an answer known at once)
     */
    public UserFuture(Executor executor, CompletableFuture<T> source) {
        this.executor = executor;
        this.source = source;
    }

    /**
     * Completes the future with the internal answer; call it on the callback executor.
     *
     * @param value the answer, when {@code error} is null
     * @param error the failure (a {@code CompletionException} is unwrapped), or null
     */
    public void answer(T value, Throwable error) {
        if (error == null) {
            super.complete(value);
        } else {
            super.completeExceptionally(
                    error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
        }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (source != null && !source.cancel(mayInterruptIfRunning) && !source.isCancelled()) {
            return false;
        }
        return super.cancel(mayInterruptIfRunning);
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        if (source != null && !source.completeExceptionally(ex)) {
            return false;
        }
        return super.completeExceptionally(ex);
    }

    @Override
    public boolean complete(T value) {
        throw new UnsupportedOperationException("an acquisition completes only by acquiring");
    }

    @Override
    public Executor defaultExecutor() {
        return executor;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
