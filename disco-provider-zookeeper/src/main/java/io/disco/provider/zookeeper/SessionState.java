package io.disco.provider.zookeeper;

import java.util.EnumSet;
import java.util.Set;

/**
 * The states of a session (kept by its {@link SessionStatus}), with the transitions it may take: every move goes
 * through {@link #to}, which refuses one the session never makes. SUSPENDED (Curator lost the
 * connection and does not yet know whether the session survives) grants nothing new, as Curator's Tech Note 14
 * says; it ends in CONNECTED (the same session is back) or LOST.
 */
enum SessionState {
    /** Connected on the session it was opened with: grants may be committed. */
    CONNECTED,
    /** The connection is gone, the session may still be alive: no new grant, held grants kept until the deadline. */
    SUSPENDED,
    /** The session expired, or may have: everything it held is lost. Terminal but for CLOSED. */
    LOST,
    /** Closed by its owner. Terminal. */
    CLOSED;

    private Set<SessionState> next() {
        return switch (this) {
            case CONNECTED -> EnumSet.of(SUSPENDED, LOST, CLOSED);
            case SUSPENDED -> EnumSet.of(CONNECTED, LOST, CLOSED);
            case LOST -> EnumSet.of(CLOSED);
            case CLOSED -> EnumSet.noneOf(SessionState.class);
        };
    }

    /**
     * @param to the next state
     * @return {@code to}
     * @throws IllegalStateException if the transition is not allowed
     */
    SessionState to(SessionState to) {
        if (!next().contains(to)) {
            throw new IllegalStateException("a ZooKeeper session cannot go from " + this + " to " + to);
        }
        return to;
    }

    boolean mayMoveTo(SessionState to) {
        return next().contains(to);
    }
}
