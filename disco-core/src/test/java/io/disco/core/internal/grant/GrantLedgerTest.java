package io.disco.core.internal.grant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The one grant lifecycle, without a backend: the states move only along their table, and the ledger's moves keep
 * the rules every backend relies on (one acquisition at a time, a commit refused once its caller gave up, a release
 * given up at once, nothing handed out while it is unconfirmed, the loss reported once by the next release).
 */
class GrantLedgerTest {

    record TestHeld(String grant, String claim) implements Held<String> {}

    static final class TestAcquisition implements Acquisition<String> {
        final boolean tryOnly;
        final CompletableFuture<String> answer = new CompletableFuture<>();

        TestAcquisition(boolean tryOnly) {
            this.tryOnly = tryOnly;
        }

        @Override
        public boolean tryOnly() {
            return tryOnly;
        }

        @Override
        public void answerAtOnce(String held) {
            answer.complete(held);
        }

        @Override
        public boolean handOver(String grant) {
            return answer.complete(grant);
        }

        @Override
        public void fail(Throwable cause) {
            answer.completeExceptionally(cause);
        }
    }

    static final class TestRelease implements Release<TestHeld> {
        final TestHeld held;
        boolean givenUp;
        boolean maybeApplied;

        TestRelease(TestHeld held) {
            this.held = held;
        }

        @Override
        public TestHeld held() {
            return held;
        }

        @Override
        public boolean givenUp() {
            return givenUp;
        }

        @Override
        public boolean maybeApplied() {
            return maybeApplied;
        }
    }

    private final GrantLedger<String, TestHeld, TestAcquisition, TestRelease, IllegalStateException> ledger =
            new GrantLedger<>("the lock on /locks/a");

    @Test
    void aGrantMovesOnlyAlongItsTable() {
        Map<GrantState, Set<GrantState>> allowed = Map.of(
                GrantState.IDLE, EnumSet.of(GrantState.ACQUIRING, GrantState.HELD, GrantState.LOST, GrantState.CLOSED),
                GrantState.ACQUIRING, EnumSet.of(GrantState.IDLE, GrantState.HELD, GrantState.LOST, GrantState.CLOSED),
                GrantState.HELD, EnumSet.of(GrantState.IDLE, GrantState.LOST, GrantState.CLOSED),
                GrantState.LOST, EnumSet.of(GrantState.CLOSED),
                GrantState.CLOSED, EnumSet.noneOf(GrantState.class));
        for (GrantState from : GrantState.values()) {
            for (GrantState to : GrantState.values()) {
                if (allowed.get(from).contains(to)) {
                    assertEquals(to, from.to(to));
                } else {
                    IllegalStateException e = assertThrows(IllegalStateException.class, () -> from.to(to));
                    assertEquals("a service's grant cannot move from " + from + " to " + to, e.getMessage());
                }
            }
        }
        assertEquals(
                EnumSet.of(GrantState.LOST, GrantState.CLOSED),
                EnumSet.copyOf(EnumSet.allOf(GrantState.class).stream()
                        .filter(GrantState::finished)
                        .toList()));
    }

    private TestHeld hold(String grant) {
        TestAcquisition a = new TestAcquisition(false);
        assertFalse(ledger.begin(a, h -> {}).answered());
        TestHeld held = new TestHeld(grant, "claim-" + grant);
        assertTrue(ledger.commit(a, held));
        assertEquals(grant, a.answer.join());
        return held;
    }

    @Test
    void oneAcquisitionAtATimeAndTheHeldGrantAnswersAtOnce() {
        TestAcquisition first = new TestAcquisition(false);
        ledger.begin(first, h -> {});
        IllegalStateException busy =
                assertThrows(IllegalStateException.class, () -> ledger.begin(new TestAcquisition(false), h -> {}));
        assertEquals(
                "an acquisition of the lock on /locks/a is already in progress: use one service per concurrent owner",
                busy.getMessage());
        assertTrue(ledger.commit(first, new TestHeld("t1", "c1")));
        TestAcquisition again = new TestAcquisition(false);
        assertTrue(ledger.begin(again, h -> {}).answered());
        assertEquals("t1", again.answer.join());
        assertThrows(
                IllegalArgumentException.class,
                () -> ledger.begin(new TestAcquisition(false), h -> {
                    throw new IllegalArgumentException("another mode");
                }));
    }

    @Test
    void aCommitAfterTheCallerGaveUpIsRefusedAndFreesNothingTwice() {
        TestAcquisition a = new TestAcquisition(false);
        ledger.begin(a, h -> {});
        a.answer.cancel(false); // the caller gave up
        ledger.acquisitionEnded(a);
        assertFalse(ledger.commit(a, new TestHeld("t1", "c1")));
        assertEquals(Optional.empty(), ledger.held());
        TestAcquisition next = new TestAcquisition(false);
        assertFalse(ledger.begin(next, h -> {}).answered());
    }

    @Test
    void aReleaseGivesTheGrantUpAtOnceAndNothingIsHandedOutUntilItIsConfirmed() {
        TestHeld held = hold("t1");
        GrantLedger.ReleaseStep<TestRelease, TestHeld> step = ledger.release(h -> true, TestRelease::new);
        assertTrue(step.first());
        assertSame(held, step.release().held());
        assertEquals(Optional.empty(), ledger.held());
        assertTrue(ledger.releaseUnconfirmed());
        TestAcquisition tryOnly = new TestAcquisition(true);
        GrantLedger.Begun<TestRelease> begun = ledger.begin(tryOnly, h -> {});
        assertTrue(begun.answered());
        assertNull(tryOnly.answer.join(), "a try finds the unconfirmed release in the way");
        TestAcquisition waiting = new TestAcquisition(false);
        begun = ledger.begin(waiting, h -> {});
        assertFalse(begun.answered());
        assertSame(step.release(), begun.releaseFirst(), "it waits for the release first");
        GrantLedger.ReleaseStep<TestRelease, TestHeld> again = ledger.release(h -> true, TestRelease::new);
        assertSame(step.release(), again.release(), "a second call waits for the same release");
        assertFalse(again.first());
        assertSame(waiting, ledger.confirmed(step.release()));
        assertFalse(ledger.releaseUnconfirmed());
    }

    @Test
    void aRefusedReleaseHoldsAgainOnlyIfNobodyWasToldAndNothingMayHaveBeenApplied() {
        hold("t1");
        TestRelease r = ledger.release(h -> true, TestRelease::new).release();
        r.maybeApplied = true;
        assertFalse(ledger.holdAgain(r));
        r.maybeApplied = false;
        r.givenUp = true;
        assertFalse(ledger.holdAgain(r));
        r.givenUp = false;
        assertTrue(ledger.holdAgain(r));
        assertEquals(Optional.of("t1"), ledger.held());
    }

    @Test
    void aLostHeldGrantIsReportedOnceByTheNextRelease() {
        TestHeld held = hold("t1");
        IllegalStateException loss = new IllegalStateException("lost");
        GrantLedger.Ending<TestAcquisition, TestHeld, TestRelease, IllegalStateException> end = ledger.lose(() -> loss);
        assertSame(held, end.held());
        assertNull(ledger.lose(() -> new IllegalStateException("again")), "lost once");
        assertSame(loss, assertThrows(IllegalStateException.class, () -> ledger.release(h -> true, TestRelease::new)));
        assertNull(ledger.release(h -> true, TestRelease::new), "reported once");
        assertSame(
                loss,
                assertThrows(IllegalStateException.class, () -> ledger.begin(new TestAcquisition(false), h -> {})));
        assertEquals(Optional.of(loss), ledger.loss());
    }

    @Test
    void aCloseGivesUpTheHeldGrantAndLeavesThePendingAcquisitionToWithdraw() {
        hold("t1");
        GrantLedger.Closing<TestAcquisition, TestRelease> closing = ledger.close(TestRelease::new, h -> {});
        assertTrue(closing.first());
        assertEquals("t1", closing.release().held().grant());
        assertNull(ledger.close(TestRelease::new, h -> {}), "closed once");
        IllegalStateException closed =
                assertThrows(IllegalStateException.class, () -> ledger.begin(new TestAcquisition(false), h -> {}));
        assertEquals("the lock on /locks/a is closed", closed.getMessage());
        assertTrue(ledger.closed());
    }

    @Test
    void aGoneClaimIsTheReleasesOrTheHeldGrants() {
        hold("t1");
        assertTrue(ledger.gone(h -> h.claim().equals("claim-t1")).held());
        TestRelease r = ledger.release(h -> true, TestRelease::new).release();
        GrantLedger.Gone<TestRelease> gone = ledger.gone(h -> h.claim().equals("claim-t1"));
        assertSame(r, gone.release());
        assertFalse(gone.held());
    }
}
