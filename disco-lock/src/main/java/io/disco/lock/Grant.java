package io.disco.lock;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.Objects;

/**
 * Proof of one acquisition of a distributed lock.
 *
 * <p>{@link #token()} is strictly greater than the token of every earlier acquisition of the same
 * lock, by any owner. Attach it to every request sent to the guarded resource; once the lock has
 * passed to another owner (because this one released it, or its lease expired while it was paused),
 * the resource rejects this token.
 *
 * <p>A grant stays the same object for as long as its owner holds the lock; it does not say whether
 * the lock is still held. Use {@link LockService#done()} to learn about a lost lease.
 *
 * @param key the backend key that represents this owner's claim (for etcd: {@code <prefix>/<lease id in hex>})
 * @param token the fencing token of this acquisition
 */
public record Grant(String key, FencingToken token) implements Fenced {

    /**
     * @param key the backend key of this claim, not null
     * @param token the fencing token, not null
     */
    public Grant {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
    }
}
