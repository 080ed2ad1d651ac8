package io.disco.provider.redis;

import io.disco.core.internal.grant.Held;

/**
 * A grant a queue service holds: the grant handed to the user, its kind, its claim (key and id), the token as the
 * claim's key records it (what a release is guarded by), and when it was committed ({@link System#nanoTime()}).
 *
 * @param <G> the grant
 */
record HeldClaim<G>(G grant, ClaimKind kind, String key, String id, String tokenText, long sinceNanos)
        implements Held<G> {

    /** The same claim with another grant (an election's proclamation: the same term with a new value). */
    HeldClaim<G> withGrant(G replacement) {
        return new HeldClaim<>(replacement, kind, key, id, tokenText, sinceNanos);
    }
}
