package io.disco.provider.zookeeper;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where the grant of one queue service ({@link ZkQueueService}: the lock, the read/write lock, the semaphore, the
 * election) stands, in its {@link GrantLedger}. Every move goes through {@link #to}, which refuses a move the
 * service never makes: such a move is a bug, and it fails loudly.
 *
 * <pre>
 *   IDLE ◄──► WAITING ──► HELD ──► IDLE
 *     └────────────────────► HELD          (a release refused for good: held again)
 *     └──────────┴──────────┴──► LOST ──► CLOSED
 *     └──────────┴──────────┴────────────► CLOSED
 * </pre>
 */
enum GrantState {
    /**
     * Neither holding nor waiting. The last grant's release may still be unconfirmed (its delete unanswered): it is
     * given up all the same, and nothing is handed out until the release is confirmed ({@link QueueRelease}).
     */
    IDLE,
    /** One acquisition is in progress (waiting, first, for an unconfirmed release of the last grant, if any). */
    WAITING,
    /** The grant is held. */
    HELD,
    /** The session, or the own node, was lost: finished. */
    LOST,
    /** Closed by its owner: finished. */
    CLOSED;

    private Set<GrantState> next() {
        return switch (this) {
            // IDLE -> HELD: a release ZooKeeper refused for good, having applied nothing, holds the grant again
            case IDLE -> EnumSet.of(WAITING, HELD, LOST, CLOSED);
            case WAITING -> EnumSet.of(IDLE, HELD, LOST, CLOSED);
            case HELD -> EnumSet.of(IDLE, LOST, CLOSED);
            case LOST -> EnumSet.of(CLOSED);
            case CLOSED -> EnumSet.noneOf(GrantState.class);
        };
    }

    /**
     * @param to the next state
     * @return {@code to}
     * @throws IllegalStateException if the transition is not allowed
     */
    GrantState to(GrantState to) {
        if (!next().contains(to)) {
            throw new IllegalStateException("a ZooKeeper lock cannot go from " + this + " to " + to);
        }
        return to;
    }

    boolean finished() {
        return this == LOST || this == CLOSED;
    }
}
