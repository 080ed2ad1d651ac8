package io.disco.provider.zookeeper;

import java.util.EnumSet;
import java.util.Set;

/** The states of one {@link ZkLockService}, with the transitions it may take. */
enum LockState {
    /**
     * Neither holding nor waiting. The last grant's release may still be unconfirmed (its delete unanswered): it is
     * given up all the same, and nothing is handed out until the release is confirmed ({@link QueueRelease}).
     */
    IDLE,
    /** One acquisition is in progress (waiting, first, for an unconfirmed release of the last grant, if any). */
    WAITING,
    /** The lock is held. */
    HELD,
    /** The session, or the own node, was lost: finished. */
    LOST,
    /** Closed by its owner: finished. */
    CLOSED;

    private Set<LockState> next() {
        return switch (this) {
            case IDLE -> EnumSet.of(WAITING, LOST, CLOSED);
            case WAITING -> EnumSet.of(IDLE, HELD, LOST, CLOSED);
            case HELD -> EnumSet.of(IDLE, LOST, CLOSED);
            case LOST -> EnumSet.of(CLOSED);
            case CLOSED -> EnumSet.noneOf(LockState.class);
        };
    }

    /**
     * @param to the next state
     * @return {@code to}
     * @throws IllegalStateException if the transition is not allowed
     */
    LockState to(LockState to) {
        if (!next().contains(to)) {
            throw new IllegalStateException("a ZooKeeper lock cannot go from " + this + " to " + to);
        }
        return to;
    }

    boolean finished() {
        return this == LOST || this == CLOSED;
    }
}
