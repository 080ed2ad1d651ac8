package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * The state machines of a claim and a session's lease: every allowed move is made, every other move fails
 * loudly (a service's grant: disco-core's {@code GrantLedgerTest}). Runs without etcd.
 */
class StateTransitionsTest {

    @Test
    void aClaimMovesOnlyAlongItsTable() {
        Map<ClaimState, Set<ClaimState>> allowed = Map.of(
                ClaimState.NEW, EnumSet.of(ClaimState.CREATING, ClaimState.WITHDRAWING),
                ClaimState.CREATING,
                        EnumSet.of(
                                ClaimState.WAITING,
                                ClaimState.VALIDATING,
                                ClaimState.ABANDONED,
                                ClaimState.WITHDRAWING),
                ClaimState.WAITING, EnumSet.of(ClaimState.VALIDATING, ClaimState.WITHDRAWING),
                ClaimState.VALIDATING, EnumSet.of(ClaimState.COMMITTED, ClaimState.WITHDRAWING),
                ClaimState.ABANDONED, EnumSet.of(ClaimState.WITHDRAWING),
                ClaimState.WITHDRAWING, EnumSet.of(ClaimState.SETTLED),
                ClaimState.COMMITTED, EnumSet.noneOf(ClaimState.class),
                ClaimState.SETTLED, EnumSet.noneOf(ClaimState.class));
        assertMovesExactly(ClaimState.class, allowed, ClaimState::to);
    }

    @Test
    void aClaimIsFinishedOnceCommittedOrGivenUp() {
        assertEquals(
                EnumSet.of(ClaimState.COMMITTED, ClaimState.ABANDONED, ClaimState.WITHDRAWING, ClaimState.SETTLED),
                filter(ClaimState.class, ClaimState::finished));
    }

    @Test
    void aLeaseMovesOnlyAlongItsTable() {
        Map<LeaseState, Set<LeaseState>> allowed = Map.of(
                LeaseState.ALIVE, EnumSet.of(LeaseState.ORPHANED, LeaseState.LOST, LeaseState.CLOSED),
                LeaseState.ORPHANED, EnumSet.of(LeaseState.LOST, LeaseState.CLOSED),
                LeaseState.LOST, EnumSet.of(LeaseState.CLOSED),
                LeaseState.CLOSED, EnumSet.noneOf(LeaseState.class));
        assertMovesExactly(LeaseState.class, allowed, LeaseState::to);
        assertEquals(EnumSet.of(LeaseState.LOST, LeaseState.CLOSED), filter(LeaseState.class, LeaseState::finished));
    }

    @Test
    void aForbiddenMoveNamesBothStates() {
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> ClaimState.SETTLED.to(ClaimState.COMMITTED));
        assertEquals("a claim cannot move from SETTLED to COMMITTED", e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> LeaseState.LOST.to(LeaseState.ALIVE));
        assertEquals("a session's lease cannot move from LOST to ALIVE", e.getMessage());
    }

    /** Every pair of states: the move succeeds (returning the target) exactly when {@code allowed} lists it. */
    private static <S extends Enum<S>> void assertMovesExactly(
            Class<S> type, Map<S, Set<S>> allowed, BiFunction<S, S, S> to) {
        assertEquals(EnumSet.allOf(type), EnumSet.copyOf(allowed.keySet()), "the table covers every state");
        for (S from : type.getEnumConstants()) {
            for (S next : type.getEnumConstants()) {
                if (allowed.get(from).contains(next)) {
                    assertEquals(next, to.apply(from, next), from + " -> " + next);
                } else {
                    assertThrows(
                            IllegalStateException.class,
                            () -> to.apply(from, next),
                            from + " -> " + next + " must be refused");
                }
            }
        }
    }

    private static <S extends Enum<S>> Set<S> filter(Class<S> type, java.util.function.Predicate<S> p) {
        Set<S> out = EnumSet.noneOf(type);
        for (S s : type.getEnumConstants()) {
            if (p.test(s)) {
                out.add(s);
            }
        }
        return out;
    }
}
