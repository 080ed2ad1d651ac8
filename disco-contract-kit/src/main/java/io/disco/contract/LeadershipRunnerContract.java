package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The {@link LeadershipRunner} contract: a lost term signals the task promptly and a new term comes with a
 * higher token; terms of several runners never overlap; a failing task is resigned and requeued as configured;
 * relinquish hands over; close signals the task, waits for it, resigns and leaves no key, also from inside the
 * task; a bounded close keeps the leadership of a task that ignores its signal and gives it up once it returns; a stale term's writes are rejected. The runners are created through
 * {@link io.disco.client.TestableBackend#newLeadershipRunner}. Extend it with a {@link #backend()}.
 */
public abstract class LeadershipRunnerContract extends ContractSupport {

    private LeadershipRunner runner(
            String name, String value, LeaderTask task, LeadershipEvents events, boolean requeue) {
        return runner(
                name,
                LeadershipRunner.Options.builder(value, task)
                        .listener(events)
                        .requeue(requeue)
                        .backoff(Duration.ofMillis(50), Duration.ofMillis(500))
                        .build(),
                2);
    }

    /** A task that holds its term until the term ends, and records how it ended. */
    private static LeaderTask holdUntilEnd(List<String> seen) {
        return term -> {
            try {
                term.awaitEnd(Duration.ofMinutes(1));
            } catch (InterruptedException e) {
                seen.add("interrupted " + term.token().value());
            }
            seen.add("ended " + term.token().value() + " " + term.end().orElseThrow());
        };
    }

    @Test
    void theLeaderKeyDeletedSignalsTheTaskAndANewTermStartsWithAHigherToken() throws Exception {
        String name = uniqueName("runner-del");
        LeadershipEvents events = new LeadershipEvents();
        List<String> seen = new CopyOnWriteArrayList<>();
        runner(name, "a", holdUntilEnd(seen), events, true);
        Leadership first = events.elected(10);
        long deleted = System.nanoTime();
        backend().deleteKey(first.key()); // an operator
        LeadershipEvents.Event end = events.revoked(10);
        assertEquals(LeaderTerm.End.LOST, end.end());
        assertInstanceOf(LeadershipLostException.class, end.cause());
        assertTrue(end.nanos() - deleted < TimeUnit.SECONDS.toNanos(2), "signalled promptly");
        assertTrue(seen.contains("ended " + first.token().value() + " LOST"), "the task saw the loss: " + seen);
        Leadership second = events.elected(15);
        assertTrue(second.token().isNewerThan(first.token()), first.token() + " then " + second.token());
    }

    @Test
    void threeRunnersOver100TermsNeverOverlapAndTokensStrictlyIncrease() throws Exception {
        String name = uniqueName("runner-terms");
        Guard guard = Guard.create();
        List<Long> history = new CopyOnWriteArrayList<>();
        List<String> overlaps = new CopyOnWriteArrayList<>();
        AtomicInteger active = new AtomicInteger();
        AtomicInteger terms = new AtomicInteger();
        LeaderTask task = term -> {
            if (active.incrementAndGet() != 1) {
                overlaps.add("term " + term.token() + " started while another ran");
            }
            try {
                for (int i = 0; i < 3; i++) {
                    guard.run(term.token(), () -> history.add(term.token().value()));
                }
            } finally {
                active.decrementAndGet();
                terms.incrementAndGet();
            }
        };
        List<LeadershipRunner> runners = new ArrayList<>();
        try {
            for (String value : List.of("a", "b", "c")) {
                runners.add(runner(name, value, task, new LeadershipEvents(), true));
            }
            Awaitility.await().atMost(Duration.ofSeconds(90)).until(() -> terms.get() >= 100);
        } finally {
            runners.forEach(LeadershipRunner::close);
        }
        assertEquals(List.of(), overlaps);
        long distinct = history.stream().distinct().count();
        assertTrue(distinct >= 100, distinct + " terms wrote");
        for (int i = 1; i < history.size(); i++) {
            assertTrue(history.get(i) >= history.get(i - 1), "history goes back at " + i + ": " + history);
        }
        assertKeys(name); // closed runners leave no key
    }

    @Test
    void aTaskThatThrowsIsLoggedResignedAndRequeuedPerConfiguration() throws Exception {
        String name = uniqueName("runner-throw");
        LeadershipEvents events = new LeadershipEvents();
        AtomicInteger runs = new AtomicInteger();
        LeaderTask failing = term -> {
            runs.incrementAndGet();
            throw new IllegalStateException("task failed in term " + term.token());
        };
        try (LeadershipRunner once = runner(name, "once", failing, events, false)) {
            Leadership term = events.elected(10);
            LeadershipEvents.Event end = events.revoked(10);
            assertEquals(LeaderTerm.End.FAILED, end.end());
            assertEquals("task failed in term " + term.token(), end.cause().getMessage());
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !once.isRunning());
            assertKeys(name); // resigned
            assertEquals(1, runs.get());
        }
        LeadershipEvents again = new LeadershipEvents();
        try (LeadershipRunner requeued = runner(name, "again", failing, again, true)) {
            Leadership first = again.elected(10);
            assertEquals(LeaderTerm.End.FAILED, again.revoked(10).end());
            Leadership second = again.elected(10);
            assertTrue(second.token().isNewerThan(first.token()));
            assertTrue(requeued.isRunning());
        }
    }

    @Test
    void relinquishHandsOverToTheNextCandidateAndCampaignsBehindIt() throws Exception {
        String name = uniqueName("runner-yield");
        LeadershipEvents ea = new LeadershipEvents();
        LeadershipEvents eb = new LeadershipEvents();
        List<String> seen = new CopyOnWriteArrayList<>();
        LeadershipRunner a = runner(name, "a", holdUntilEnd(seen), ea, true);
        Leadership a1 = ea.elected(10);
        LeadershipRunner b = runner(name, "b", holdUntilEnd(seen), eb, true);
        awaitKeyCount(name, 2);
        assertFalse(b.relinquish(), "b does not lead");
        assertTrue(a.relinquish());
        assertEquals(LeaderTerm.End.RELINQUISHED, ea.revoked(10).end());
        Leadership b1 = eb.elected(10);
        assertTrue(b1.token().isNewerThan(a1.token()));
        awaitKeyCount(name, 2); // a campaigns again behind b: b's relinquish hands over to it, not to b's next campaign
        assertTrue(b.relinquish());
        assertEquals(LeaderTerm.End.RELINQUISHED, eb.revoked(10).end());
        Leadership a2 = ea.elected(10);
        assertTrue(a2.token().isNewerThan(b1.token()), "a campaigned again behind b");
        assertTrue(seen.contains("ended " + a1.token().value() + " RELINQUISHED"), seen.toString());
        // leader changes reach every runner's listener
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> ea.leaders().equals(List.of("a", "b", "a")));
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> eb.leaders().equals(List.of("a", "b", "a")));
    }

    @Test
    void closeSignalsTheTaskWaitsForItResignsAndLeavesNoKey() throws Exception {
        String name = uniqueName("runner-close");
        LeadershipEvents events = new LeadershipEvents();
        List<String> seen = new CopyOnWriteArrayList<>();
        LeadershipRunner r = runner(name, "a", holdUntilEnd(seen), events, true);
        Leadership term = events.elected(10);
        assertEquals(term, r.leadership().orElseThrow());
        r.close();
        assertTrue(
                seen.contains("ended " + term.token().value() + " CLOSED"),
                "the task returned before close did: " + seen);
        assertEquals(LeaderTerm.End.CLOSED, events.revoked(10).end());
        assertFalse(r.isRunning());
        assertTrue(r.leadership().isEmpty());
        assertKeys(name);
        r.close(); // idempotent
    }

    @Test
    void aBoundedCloseKeepsTheLeadershipOfATaskThatIgnoresItsSignalUntilItReturns() throws Exception {
        String name = uniqueName("runner-close-bounded");
        LeadershipEvents events = new LeadershipEvents();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean running = new AtomicBoolean();
        AtomicInteger signals = new AtomicInteger();
        LeaderTask stubborn = ignoringItsSignal(release, running, signals::incrementAndGet);
        LeadershipRunner a = runner(name, "a", stubborn, events, true);
        Leadership term = events.elected(10);
        AtomicInteger otherTerms = new AtomicInteger();
        LeadershipEvents eb = new LeadershipEvents();
        runner(
                name,
                "b",
                t -> {
                    otherTerms.incrementAndGet();
                    t.awaitEnd(Duration.ofMinutes(1));
                },
                eb,
                true);
        awaitKeyCount(name, 2);

        long start = System.nanoTime();
        assertFalse(a.close(Duration.ofMillis(200)), "the task has not returned");
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waited >= 200 && waited < 2_000, "waited " + waited + " ms");
        assertEquals(1, signals.get(), "the task was signalled");
        // the leadership is kept while the task runs: its key stays and nobody else is elected
        Awaitility.await()
                .during(Duration.ofMillis(700))
                .atMost(Duration.ofSeconds(3))
                .until(() ->
                        running.get() && keys(name).contains(term.key()) && otherTerms.get() == 0 && a.isRunning());

        release.countDown(); // the task returns: now the runner resigns by itself
        assertEquals(LeaderTerm.End.CLOSED, events.revoked(10).end());
        Leadership next = eb.elected(10);
        assertTrue(next.token().isNewerThan(term.token()), term.token() + " then " + next.token());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !a.isRunning());
        assertKeys(name, next.key());
        assertTrue(a.close(Duration.ZERO), "a stopped runner reports it at once");
    }

    @Test
    void aBoundedCloseOfACooperativeTaskReturnsTrueWithinTheBoundAndLeavesNoKey() throws Exception {
        String name = uniqueName("runner-close-bounded-ok");
        LeadershipEvents events = new LeadershipEvents();
        List<String> seen = new CopyOnWriteArrayList<>();
        LeadershipRunner r = runner(name, "a", holdUntilEnd(seen), events, true);
        Leadership term = events.elected(10);
        long start = System.nanoTime();
        assertTrue(r.close(Duration.ofSeconds(2)), "the task returned on its signal");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2));
        assertTrue(seen.contains("ended " + term.token().value() + " CLOSED"), seen.toString());
        assertFalse(r.isRunning());
        assertTrue(r.leadership().isEmpty());
        assertKeys(name);
        assertTrue(r.close(Duration.ofMillis(-1)), "a bound of zero or less does not wait, and tells that it stopped");
    }

    @Test
    void aTaskThatClosesItsOwnRunnerDoesNotDeadlock() throws Exception {
        String name = uniqueName("runner-self-close");
        LeadershipEvents events = new LeadershipEvents();
        LeadershipRunner[] self = new LeadershipRunner[1];
        CountDownLatch created = new CountDownLatch(1);
        LeadershipRunner r = runner(
                name,
                "a",
                term -> {
                    created.await();
                    self[0].close();
                    assertFalse(term.isActive(), "closing ended the term");
                },
                events,
                true);
        self[0] = r;
        created.countDown();
        events.elected(10);
        assertEquals(LeaderTerm.End.CLOSED, events.revoked(10).end());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !r.isRunning());
        assertKeys(name);
    }

    @Test
    void closeWhileCampaigningWithdrawsTheCandidacy() throws Exception {
        String name = uniqueName("runner-close-waiting");
        LeadershipEvents ea = new LeadershipEvents();
        runner(name, "a", holdUntilEnd(new CopyOnWriteArrayList<>()), ea, true);
        Leadership a = ea.elected(10);
        LeadershipRunner b = runner(name, "b", term -> {}, new LeadershipEvents(), true);
        awaitKeyCount(name, 2);
        b.close();
        assertKeys(name, a.key()); // only a's key is left
    }

    @Test
    void aStaleTermsWritesAreRejectedByTheGuard() throws Exception {
        String name = uniqueName("runner-guard");
        Guard guard = Guard.create();
        LeadershipEvents ea = new LeadershipEvents();
        LeadershipEvents eb = new LeadershipEvents();
        LeadershipRunner a = runner(name, "a", holdUntilEnd(new CopyOnWriteArrayList<>()), ea, false);
        FencingToken old = ea.elected(10).token();
        guard.check(old);
        runner(name, "b", term -> guard.check(term.token()), eb, false);
        awaitKeyCount(name, 2);
        a.relinquish();
        eb.elected(10);
        assertEquals(LeaderTerm.End.COMPLETED, eb.revoked(10).end());
        assertThrows(TokenStaleException.class, () -> guard.check(old));
    }
}
