package io.disco.provider.etcd;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of a session's lease, as {@link LeaseKeeper} moves it; {@link EtcdSession.State} shows it
 * to users. Every move goes through {@link #to}, which refuses a move the session never makes.
 */
enum LeaseState {
    /** Renewed; its services may hold grants. */
    ALIVE,
    /** {@code orphan()} stopped the renewals; the lease runs out. */
    ORPHANED,
    /** Lost: revoked, expired on the server, or not renewed within its validity. */
    LOST,
    /** Closed by its owner (also after a loss). Final. */
    CLOSED;

    /** The states this one may move to. */
    private Set<LeaseState> next() {
        switch (this) {
            case ALIVE:
                return EnumSet.of(ORPHANED, LOST, CLOSED);
            case ORPHANED:
            case LOST:
                return EnumSet.of(this == ORPHANED ? LOST : CLOSED, CLOSED);
            default:
                return EnumSet.noneOf(LeaseState.class);
        }
    }

    /** @return whether the lease is over: its services can hold nothing any more */
    boolean finished() {
        return this == LOST || this == CLOSED;
    }

    /**
     * @return {@code next}, the state after this one
     * @throws IllegalStateException if the session never moves from this state to {@code next}: a bug
     */
    LeaseState to(LeaseState next) {
        if (!next().contains(next)) {
            throw new IllegalStateException("a session's lease cannot move from " + this + " to " + next);
        }
        return next;
    }
}
