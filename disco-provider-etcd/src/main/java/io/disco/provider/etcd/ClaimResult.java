package io.disco.provider.etcd;

import java.util.concurrent.CompletableFuture;

/**
 * A claim's internal future ({@link QueueClaim#result}): the blocking calls wait on it ({@link ClaimCaller}),
 * and the user's future ({@link io.disco.core.internal.UserFuture}) follows it. Nothing of the user's is
 * attached to it, so it may complete on the session thread. Completing it with the grant is the commit point
 * ({@link ClaimOwner#commit}), and only the claim completes it ({@link #complete} is refused); cancelling it,
 * or completing it exceptionally, before that withdraws the claim.
 *
 * @param <G> the grant type; null means "not acquired" (try-only claims)
 */
final class ClaimResult<G> extends CompletableFuture<G> {

    /**
     * Runs before the result ends without a grant (failed, cancelled, or null for a try), so that the service is
     * free for the next acquisition before anyone can see this one end; set once, before the claim starts.
     */
    private volatile Runnable beforeEnd;

    /** Sets what runs before the result ends without a grant (see {@link #beforeEnd}). */
    void beforeEnd(Runnable hook) {
        beforeEnd = hook;
    }

    private void ending() {
        Runnable hook = beforeEnd;
        if (hook != null && !isDone()) {
            hook.run();
        }
    }

    @Override
    public boolean complete(G value) {
        throw new UnsupportedOperationException("an acquisition completes only by acquiring");
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        ending();
        return super.cancel(mayInterruptIfRunning);
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        ending();
        return super.completeExceptionally(ex);
    }

    boolean internalComplete(G value) {
        if (value == null) {
            ending();
        }
        return super.complete(value);
    }

    void internalFail(Throwable ex) {
        ending();
        super.completeExceptionally(ex);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
