package io.disco.core;

import io.disco.fencing.FencingToken;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One key in a name's queue, as {@link DiscoSession#claimants} and the client's
 * {@code Disco.claimants} list it: a holder, or a waiter, of a lock, read/write lock, semaphore or
 * election, whichever client made it (this library in any process, etcd's Go recipes,
 * {@code etcdctl}, ...). A snapshot: by the time it is read, the holder may have changed. For people
 * and health checks; never take a token from here to fence with (attach the token your own hold
 * returned).
 *
 * @param key the claim's key, for example {@code /locks/orders/694d8a3c3b7f1a04}
 * @param leaseId the lease the key is attached to (0 if none)
 * @param role whether it holds or waits
 * @param position its place in the queue, from 0 (the first holder), in order of creation
 * @param mode {@link Mode#SHARED} for a reader of a read/write lock and a semaphore permit, else
 *     {@link Mode#EXCLUSIVE}
 * @param token the holder's fencing token, where the backend's state gives it (see the provider's
 *     description of the listing); always empty for a waiter
 * @param heldSince when the hold began, where the backend's state gives it (this library's claim made
 *     without waiting: its {@code claimedAt}; one that waited: the time its holder recorded with the token;
 *     see the provider's description of the listing); at or after {@link ClaimMetadata#claimedAt()}; always
 *     empty for a waiter
 * @param metadata who made the claim (see {@link ClaimMetadata}): source {@link ClaimMetadata.Source#DISCO}
 *     when this library made it; {@link ClaimMetadata#EMPTY} for an election candidate, whose value is its
 *     own, and for a claim of etcd's Go recipes or {@code etcdctl}; {@link ClaimMetadata#UNKNOWN} for any
 *     other value. {@link #madeByDisco()} gives it only when this library made the claim
 * @param value the key's value as text: this library's JSON, another client's value, or an election
 *     candidate's value
 */
public record Claimant(
        String key,
        long leaseId,
        Role role,
        int position,
        Mode mode,
        Optional<FencingToken> token,
        Optional<Instant> heldSince,
        ClaimMetadata metadata,
        String value) {

    /** Whether a claimant holds or waits. */
    public enum Role {
        /** Holds the lock, a read or write grant, a permit, or the leadership. */
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
     * Who made the claim, when this library made it.
     *
     * <pre>{@code
     * c.madeByDisco().map(ClaimMetadata::thread)   // the claiming thread, or empty for a Go, etcdctl or election key
     * }</pre>
     *
     * @return the {@link #metadata()} if its source is {@link ClaimMetadata.Source#DISCO}; empty for another
     *     client's claim (etcd's Go recipes, {@code etcdctl}, a value that is not this library's) and for an
     *     election candidate
     */
    public Optional<ClaimMetadata> madeByDisco() {
        return metadata.source() == ClaimMetadata.Source.DISCO ? Optional.of(metadata) : Optional.empty();
    }

    /**
     * Checks the components.
     *
     * @param key the claim's key
     * @param leaseId the lease the key is attached to (0 if none)
     * @param role whether it holds or waits
     * @param position its place in the queue, from 0
     * @param mode whether it holds alone or beside others
     * @param token the holder's fencing token, where the backend's state gives it; empty for a waiter
     * @param heldSince when the hold began, where the backend's state gives it; empty for a waiter
     * @param metadata who made the claim
     * @param value the key's value as text
     * @throws NullPointerException if a component is null
     * @throws IllegalArgumentException if {@code position} is negative, or a waiter has a token or a hold's start
     */
    public Claimant {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(heldSince, "heldSince");
        Objects.requireNonNull(metadata, "metadata");
        Objects.requireNonNull(value, "value");
        if (position < 0) {
            throw new IllegalArgumentException("position must not be negative, got " + position);
        }
        if (role == Role.WAITER && token.isPresent()) {
            throw new IllegalArgumentException("a waiter has no token, got " + token.get());
        }
        if (role == Role.WAITER && heldSince.isPresent()) {
            throw new IllegalArgumentException("a waiter holds nothing, got heldSince " + heldSince.get());
        }
    }
}
