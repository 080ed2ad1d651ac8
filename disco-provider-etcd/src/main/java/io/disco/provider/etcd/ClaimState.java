package io.disco.provider.etcd;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where one {@link QueueClaim} stands. Every move goes through {@link #to}, which refuses a move the
 * claim never makes: such a move is a bug, and it fails loudly.
 *
 * <pre>
 *   NEW ──► CREATING ──► WAITING ──► VALIDATING ──► COMMITTED
 *    │         │   │         │            │
 *    │         │   └─────────┴────────────┴──► WITHDRAWING ──► SETTLED
 *    │         └──► ABANDONED ──────────────────────▲
 *    └──────────────────────────────────────────────┘
 * </pre>
 * (CREATING also moves straight to VALIDATING, when nobody is ahead.)
 */
enum ClaimState {
    /** Not started: waiting for the service's previous claim to settle, or for the janitor's deletes of the key. */
    NEW,
    /** The create Txn is in flight. */
    CREATING,
    /** The own key exists; waiting until few enough keys created before it are left. */
    WAITING,
    /** Nobody (too many) ahead: waiting for the lease to be valid for the grant margin, then building the grant. */
    VALIDATING,
    /** The grant was handed to the caller and the service holds it. Final: the grant's life is the service's. */
    COMMITTED,
    /** Given up while the create Txn was in flight: withdrawn once it is answered. */
    ABANDONED,
    /** Given up (or, try-only, not acquired): the own key, or what the create Txn may create, is being deleted. */
    WITHDRAWING,
    /** Nothing of the claim is left to withdraw. Final. */
    SETTLED;

    /** The states this one may move to. */
    private Set<ClaimState> next() {
        switch (this) {
            case NEW:
                return EnumSet.of(CREATING, WITHDRAWING);
            case CREATING:
                return EnumSet.of(WAITING, VALIDATING, ABANDONED, WITHDRAWING);
            case WAITING:
                return EnumSet.of(VALIDATING, WITHDRAWING);
            case VALIDATING:
                return EnumSet.of(COMMITTED, WITHDRAWING);
            case ABANDONED:
                return EnumSet.of(WITHDRAWING);
            case WITHDRAWING:
                return EnumSet.of(SETTLED);
            default:
                return EnumSet.noneOf(ClaimState.class);
        }
    }

    /** @return whether the claim is over for its caller: committed, or given up (withdrawn or not yet) */
    boolean finished() {
        return this == COMMITTED || this == ABANDONED || this == WITHDRAWING || this == SETTLED;
    }

    /**
     * @return {@code next}, the state after this one
     * @throws IllegalStateException if a claim never moves from this state to {@code next}: a bug
     */
    ClaimState to(ClaimState next) {
        if (!next().contains(next)) {
            throw new IllegalStateException("a claim cannot move from " + this + " to " + next);
        }
        return next;
    }
}
