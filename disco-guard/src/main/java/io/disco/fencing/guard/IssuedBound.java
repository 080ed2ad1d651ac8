package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.util.concurrent.CompletionStage;

/**
 * Where a {@link Guard} learns how far the coordination service has issued tokens: the SPI that
 * keeps a token nobody issued from raising the mark. {@link Guard.Builder#issuedBound} takes one;
 * the etcd implementation is {@code io.disco.provider.etcd.EtcdIssuedBound} (disco-provider-etcd).
 *
 * <p><b>Why a bound exists.</b> A fencing token is a revision of the coordination service (etcd's
 * cluster revision at the grant, the CreateRevision of a leader's key). A legitimate token was
 * issued at a revision the service had already reached, so at the moment a resource sees it, it is
 * never above the service's current revision. A token above it was issued by nobody: a buggy client
 * or a hostile one sent, say, {@code 9223372036854775807}. Without a bound the guard would accept
 * it (it is at least the mark), the mark would become that value, and every legitimate owner after
 * it would be rejected as stale for good (and, with a {@link GuardStore}, across restarts too).
 *
 * <p><b>Contract.</b> {@link #current()} reads the service's current revision such that the value
 * is at least every token the service had issued before the call began: a linearizable read (for
 * etcd, a Get served through the leader's read index, not a member's local, possibly lagging
 * state). A value read from a lagging replica would be too low and would get legitimate owners
 * refused as "not issued". The guard calls it rarely: only for a token above both its mark and the
 * highest value it has already confirmed, that is once per change of owner, coalesced across
 * concurrent requests; never while idle; one call at a time; and after a call that refused a token
 * (one nobody issued) or failed, not again before the read interval has passed
 * ({@link Guard.Builder#boundReadInterval}), so a flood of forged tokens costs at most one call per
 * interval. It must not block: return a stage that the read completes, exceptionally
 * when the service cannot answer (the guard then refuses the token with
 * {@link BoundUnavailableException}, never admits it unconfirmed). The guard bounds each read with
 * its own timeout ({@link Guard.Builder#boundTimeout}), but an implementation should also put a
 * deadline on the call itself so that an abandoned read does not linger.
 */
@FunctionalInterface
public interface IssuedBound {

    /**
     * Reads the coordination service's current revision: at least every token it had issued when
     * the call began.
     *
     * @return a stage completed with the current revision, or exceptionally if the service could
     *     not be read; never null
     */
    CompletionStage<FencingToken> current();
}
