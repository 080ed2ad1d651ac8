package io.disco.provider.etcd;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where the grant of one service stands ({@link GrantLedger}). Every move goes through {@link #to}, which
 * refuses a move the service never makes: such a move is a bug, and it fails loudly.
 *
 * <pre>
 *   IDLE ◄──► HELD ◄─► RELEASING ──► IDLE
 *     │         │          │           (back to HELD only when etcd refused the release's delete for good)
 *     └─────────┴──────────┴──► LOST ──► CLOSED
 *     └─────────┴──────────┴────────────► CLOSED
 * </pre>
 */
enum GrantState {
    /** Nothing held; the service may acquire. */
    IDLE,
    /** A grant is held. */
    HELD,
    /**
     * A release of the held grant was sent: its key's deletion is expected, not a loss. The grant is given up
     * (never handed out again) and kept only to match that deletion until the release is confirmed.
     */
    RELEASING,
    /** The service is lost (its lease, or its held key deleted by somebody else): it hands out nothing any more. */
    LOST,
    /** Closed (by its owner, or with its session). Final. */
    CLOSED;

    /** The states this one may move to. */
    private Set<GrantState> next() {
        switch (this) {
            case IDLE:
                return EnumSet.of(HELD, LOST, CLOSED);
            case HELD:
                return EnumSet.of(RELEASING, IDLE, LOST, CLOSED);
            case RELEASING:
                return EnumSet.of(IDLE, HELD, LOST, CLOSED);
            case LOST:
                return EnumSet.of(CLOSED);
            default:
                return EnumSet.noneOf(GrantState.class);
        }
    }

    /** @return whether a grant is held (possibly being released) */
    boolean holding() {
        return this == HELD || this == RELEASING;
    }

    /**
     * @return {@code next}, the state after this one
     * @throws IllegalStateException if a service never moves from this state to {@code next}: a bug
     */
    GrantState to(GrantState next) {
        if (!next().contains(next)) {
            throw new IllegalStateException("a service's grant cannot move from " + this + " to " + next);
        }
        return next;
    }
}
