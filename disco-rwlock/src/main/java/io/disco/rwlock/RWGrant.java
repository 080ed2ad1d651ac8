package io.disco.rwlock;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.Objects;

/**
 * Proof of one acquisition of a distributed read/write lock, in one {@linkplain Mode mode}.
 *
 * <p>Tokens: a {@linkplain Mode#WRITE write} grant's token is strictly greater than the token of
 * every earlier grant of the same lock, read or write, by any owner. All {@linkplain Mode#READ read}
 * grants admitted between the same two writers share one token (a <em>read phase</em>), strictly
 * greater than the previous writer's token and strictly lower than the next writer's. So one plain
 * guard (a high-water mark) serves readers and writers alike: the readers of a phase are accepted
 * together, and once a writer has used the resource, every reader of an earlier phase and every
 * earlier writer is rejected.
 *
 * <p>A grant stays the same object for as long as its owner holds the lock; it does not say whether
 * the lock is still held. Use {@link RWLockService#done()} to learn about a lost lease.
 *
 * @param key the backend key that represents this owner's claim (for etcd:
 *            {@code <prefix>/read/<lease id in hex>} or {@code <prefix>/write/<lease id in hex>})
 * @param mode whether this is a shared (read) or an exclusive (write) grant
 * @param token the fencing token of this acquisition
 */
public record RWGrant(String key, Mode mode, FencingToken token) implements Fenced {

    /** The two ways of holding a read/write lock. */
    public enum Mode {
        /** Shared: any number of readers hold at once, never together with a writer. */
        READ,
        /** Exclusive: one writer holds, nobody else. */
        WRITE
    }

    /**
     * @param key the backend key of this claim, not null
     * @param mode the mode, not null
     * @param token the fencing token, not null
     */
    public RWGrant {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(token, "token");
    }
}
