package io.disco.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The one claim-again loop, on a scripted target: each way a claim ends (granted, taken, the unit lost, only the
 * claim lost, a failure that is or is not the loss seen early, anything else), and the waits for the unit.
 */
class SelfHealingClaimTest {

    /** A unit to claim through: lost or not, and its end. */
    static final class Unit {
        final String name;
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        volatile boolean lost;

        Unit(String name) {
            this.name = name;
        }

        void lose() {
            lost = true;
            ended.complete(null);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A claim's scripted outcome: a grant, null (taken), or a failure. */
    interface Outcome {
        String claim(Unit unit) throws InterruptedException, TimeoutException;
    }

    /** The units it hands out in turn (the last one again once they run out), and the claims' scripted outcomes. */
    static final class Script implements SelfHealingClaim.Target<Unit, String> {
        final Deque<CompletableFuture<Unit>> units = new ArrayDeque<>();
        final Deque<Outcome> outcomes = new ArrayDeque<>();
        final List<Unit> claimedThrough = new ArrayList<>();

        Script units(Unit... us) {
            for (Unit u : us) {
                units.add(CompletableFuture.completedFuture(u));
            }
            return this;
        }

        Script then(Outcome o) {
            outcomes.add(o);
            return this;
        }

        /** A claim that fails with {@code e}. */
        Script thenFails(RuntimeException e) {
            return then(u -> {
                throw e;
            });
        }

        /** A claim that loses its unit (the owner's loss) and fails with {@code e}. */
        Script thenLosesTheUnit(RuntimeException e) {
            return then(u -> {
                u.lose();
                throw e;
            });
        }

        @Override
        public CompletableFuture<Unit> unit() {
            return units.size() > 1 ? units.poll() : units.peek();
        }

        @Override
        public String claim(Unit unit, Wait wait, long deadline) throws InterruptedException, TimeoutException {
            claimedThrough.add(unit);
            return outcomes.poll().claim(unit);
        }

        @Override
        public boolean isLost(Unit unit) {
            return unit.lost;
        }

        @Override
        public CompletionStage<?> ended(Unit unit) {
            return unit.ended;
        }

        @Override
        public SelfHealingClaim.Failure failure(Unit unit, RuntimeException e) {
            if (e instanceof UnitLost) {
                return SelfHealingClaim.Failure.UNIT_LOST;
            }
            if (e instanceof ClaimLost) {
                return SelfHealingClaim.Failure.CLAIM_LOST;
            }
            return e instanceof DiscoException
                    ? SelfHealingClaim.Failure.MAYBE_UNIT_LOST
                    : SelfHealingClaim.Failure.FAILED;
        }

        @Override
        public RuntimeException finished(Unit unit) {
            return new UnitLost(unit + " is finished");
        }
    }

    static final class UnitLost extends DiscoException {
        UnitLost(String message) {
            super(message);
        }
    }

    static final class ClaimLost extends DiscoException {
        ClaimLost(String message) {
            super(message);
        }
    }

    private static long in(long millis) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void aGrantComesBackWithTheUnitItCameThrough() throws Exception {
        Unit a = new Unit("a");
        Script s = new Script().units(a).then(u -> "granted");
        SelfHealingClaim.Granted<Unit, String> g = SelfHealingClaim.claim(s, Wait.UNINTERRUPTIBLY, 0);
        assertEquals("granted", g.grant());
        assertSame(a, g.unit());
    }

    @Test
    void aTryThatFindsItTakenGetsNothing() throws Exception {
        Script s = new Script().units(new Unit("a")).then(u -> null);
        assertNull(SelfHealingClaim.claim(s, Wait.NOT_AT_ALL, 0));
    }

    @Test
    void aTryWithoutAUnitNowTimesOutAndATimedWaitAtItsDeadline() {
        Script s = new Script();
        s.units.add(new CompletableFuture<>());
        assertThrows(TimeoutException.class, () -> SelfHealingClaim.claim(s, Wait.NOT_AT_ALL, 0));
        long start = System.nanoTime();
        assertThrows(TimeoutException.class, () -> SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, in(100)));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(90));
        assertTrue(s.claimedThrough.isEmpty());
    }

    @Test
    void aUnitThatCannotComeFailsTheAcquisitionWithItsCause() {
        Script s = new Script();
        s.units.add(CompletableFuture.failedFuture(new BackendUnavailableException("no owner for too long")));
        assertThrows(BackendUnavailableException.class, () -> SelfHealingClaim.claim(s, Wait.UNINTERRUPTIBLY, 0));
        assertThrows(
                BackendUnavailableException.class, () -> SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, Long.MAX_VALUE));
    }

    @Test
    void aLostUnitIsClaimedAgainThroughTheNextOne() throws Exception {
        Unit a = new Unit("a");
        Unit b = new Unit("b");
        Script s = new Script()
                .units(a, b)
                .thenLosesTheUnit(new UnitLost("lost while waiting"))
                .then(u -> "granted");
        SelfHealingClaim.Granted<Unit, String> g = SelfHealingClaim.claim(s, Wait.UNINTERRUPTIBLY, 0);
        assertSame(b, g.unit());
        assertEquals(List.of(a, b), s.claimedThrough);
    }

    @Test
    void theSameLostUnitAgainIsTheEnd() {
        Unit a = new Unit("a");
        Script s = new Script().units(a).thenLosesTheUnit(new UnitLost("lost while waiting"));
        UnitLost e = assertThrows(UnitLost.class, () -> SelfHealingClaim.claim(s, Wait.UNINTERRUPTIBLY, 0));
        assertEquals("a is finished", e.getMessage());
        assertEquals(List.of(a), s.claimedThrough);
    }

    @Test
    void aFailureThatTurnsOutTheLossWithinTheGraceIsClaimedAgain() throws Exception {
        Unit a = new Unit("a");
        Unit b = new Unit("b");
        Script s = new Script()
                .units(a, b)
                .then(u -> {
                    CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS)
                            .execute(u::lose);
                    throw new DiscoException("lease not found");
                })
                .then(u -> "granted");
        assertSame(
                b, SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, Long.MAX_VALUE).unit());
    }

    @Test
    void aFailureThatIsNotTheLossStandsAfterTheGraceOrTheDeadline() {
        Script s = new Script().units(new Unit("a")).thenFails(new DiscoException("the backend failed"));
        long start = System.nanoTime();
        DiscoException e =
                assertThrows(DiscoException.class, () -> SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, in(200)));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals("the backend failed", e.getMessage());
        assertTrue(ms >= 150 && ms < 900, "waited the deadline, not the whole grace: " + ms + " ms");

        Script now = new Script().units(new Unit("a")).thenFails(new DiscoException("the backend failed"));
        start = System.nanoTime();
        assertThrows(DiscoException.class, () -> SelfHealingClaim.claim(now, Wait.NOT_AT_ALL, 0));
        assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(150), "a try does not wait for the grace");
    }

    @Test
    void aLostClaimOnALiveUnitIsMadeAgainThroughTheSameUnit() throws Exception {
        Unit a = new Unit("a");
        Script s = new Script()
                .units(a)
                .thenFails(new ClaimLost("its own key was deleted"))
                .then(u -> "granted");
        SelfHealingClaim.Granted<Unit, String> g = SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, in(300));
        assertSame(a, g.unit());
        assertEquals(List.of(a, a), s.claimedThrough);
    }

    @Test
    void aLostClaimOnALostUnitGoesToTheNextUnit() throws Exception {
        Unit a = new Unit("a");
        Unit b = new Unit("b");
        Script s = new Script()
                .units(a, b)
                .thenLosesTheUnit(new ClaimLost("the owner's loss, seen by the claim first"))
                .then(u -> "granted");
        assertSame(
                b, SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, Long.MAX_VALUE).unit());
    }

    @Test
    void anythingElseIsThrownAtOnce() {
        Script s = new Script()
                .units(new Unit("a"))
                .thenFails(new IllegalStateException("a second acquisition while one waits"));
        assertThrows(IllegalStateException.class, () -> SelfHealingClaim.claim(s, Wait.UNINTERRUPTIBLY, 0));
        assertEquals(1, s.claimedThrough.size());
    }

    @Test
    void theGraceIsInterruptibleOnlyForAnInterruptibleWait() throws Exception {
        Script s = new Script().units(new Unit("a")).then(u -> {
            Thread.currentThread().interrupt();
            throw new DiscoException("the backend failed");
        });
        assertThrows(InterruptedException.class, () -> SelfHealingClaim.claim(s, Wait.INTERRUPTIBLY, Long.MAX_VALUE));
        assertFalse(Thread.interrupted());

        Script un = new Script().units(new Unit("a")).then(u -> {
            Thread.currentThread().interrupt();
            throw new DiscoException("the backend failed");
        });
        assertThrows(DiscoException.class, () -> SelfHealingClaim.claim(un, Wait.UNINTERRUPTIBLY, 0));
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
    }
}
