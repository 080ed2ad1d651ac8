package io.disco.client;

import io.disco.fencing.FencingToken;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One claim on a name, as {@link Disco#claimants} lists it: a holder or a waiter, made by any client of the
 * backend (this library in any process, etcd's Go recipes, {@code etcdctl}, ...). A snapshot: by the time it
 * is read, the holder may have changed. For people and health checks; never take a token from here to fence
 * with (attach the token your own hold returned).
 *
 * @param key the claim's key in the backend, for example {@code /locks/orders/694d8a3c3b7f1a04}
 * @param lease the lease (owner) the key belongs to, 0 if none
 * @param role whether it holds or waits
 * @param position its place in the queue, from 0 (the first holder), in order of creation
 * @param mode {@link Mode#SHARED} for a reader and a semaphore permit, else {@link Mode#EXCLUSIVE}
 * @param token the holder's fencing token where the backend's state gives it; always empty for a waiter
 *     (and, on etcd, for a writer of a read/write lock, and for a lock holder that waited and whose token
 *     is not recorded yet)
 * @param holder who made the claim, when this library made it; empty for another client's claim and for an
 *     election candidate (whose value is its own)
 * @param value the key's value as text: this library's metadata, another client's value, or an election
 *     candidate's value
 */
public record Claimant(String key, long lease, Role role, int position, Mode mode, Optional<FencingToken> token,
                       Optional<Holder> holder, String value) {

    /** Whether a claim holds or waits. */
    public enum Role {
        /** Holds the lock, a read or write hold, a permit, or the leadership. */
        HOLDER,
        /** Waits in the queue behind the holders. */
        WAITER
    }

    /** How a claim holds. */
    public enum Mode {
        /** Alone: a lock, a writer, a leader. */
        EXCLUSIVE,
        /** Beside others: a reader, a semaphore permit. */
        SHARED
    }

    /**
     * Who made a claim: what this library writes into a claim's value.
     *
     * @param host the claimant's host name; empty if not known
     * @param pid the claimant's process id; 0 if not known
     * @param clientId the id the application gave its client; empty by default
     * @param thread the name of the thread that made the claim
     * @param claimedAt when the claim's key was created, on the claimant's wall clock (for people, never for
     *     ordering); empty if not known
     */
    public record Holder(String host, long pid, String clientId, String thread, Optional<Instant> claimedAt) {

        /** @throws NullPointerException if a component is null */
        public Holder {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(thread, "thread");
            Objects.requireNonNull(claimedAt, "claimedAt");
        }
    }

    /**
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if {@code position} is negative, or a waiter has a token
     */
    public Claimant {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(value, "value");
        if (position < 0) {
            throw new IllegalArgumentException("position must not be negative, got " + position);
        }
        if (role == Role.WAITER && token.isPresent()) {
            throw new IllegalArgumentException("a waiter has no token, got " + token.get());
        }
    }
}
