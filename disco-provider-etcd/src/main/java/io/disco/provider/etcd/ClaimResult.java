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

    @Override
    public boolean complete(G value) {
        throw new UnsupportedOperationException("an acquisition completes only by acquiring");
    }

    boolean internalComplete(G value) {
        return super.complete(value);
    }

    void internalFail(Throwable ex) {
        super.completeExceptionally(ex);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
