package io.disco.core.internal.grant;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where the grant of one service stands, in its {@link GrantLedger}. Every move goes through {@link #to}, which
 * refuses a move a service never makes: such a move is a bug, and it fails loudly.
 *
 * <pre>
 *   IDLE ◄──► ACQUIRING ──► HELD ──► IDLE
 *     └──────────────────────► HELD          (a release refused for good, nothing of it applied: held again)
 *     └──────────┴──────────┴──► LOST ──► CLOSED
 *     └──────────┴──────────┴────────────► CLOSED
 * </pre>
 */
public enum GrantState {
    /**
     * Neither holding nor acquiring. The last grant's release may still be unconfirmed (its delete unanswered): it
     * is given up all the same, and nothing is handed out until the release is confirmed.
     */
    IDLE,
    /** One acquisition is in progress (waiting, first, for an unconfirmed release of the last grant, if any). */
    ACQUIRING,
    /** The grant is held. */
    HELD,
    /** The owner (lease, session), or the held claim, was lost: finished. */
    LOST,
    /** Closed by its owner, or with its session: finished. */
    CLOSED;

    private Set<GrantState> next() {
        return switch (this) {
            case IDLE -> EnumSet.of(ACQUIRING, HELD, LOST, CLOSED);
            case ACQUIRING -> EnumSet.of(IDLE, HELD, LOST, CLOSED);
            case HELD -> EnumSet.of(IDLE, LOST, CLOSED);
            case LOST -> EnumSet.of(CLOSED);
            case CLOSED -> EnumSet.noneOf(GrantState.class);
        };
    }

    /**
     * @param to the next state
     * @return {@code to}
     * @throws IllegalStateException if a service never moves from this state to {@code to}: a bug
     */
    public GrantState to(GrantState to) {
        if (!next().contains(to)) {
            throw new IllegalStateException("a service's grant cannot move from " + this + " to " + to);
        }
        return to;
    }

    /** @return whether the service is finished: lost or closed */
    public boolean finished() {
        return this == LOST || this == CLOSED;
    }
}
