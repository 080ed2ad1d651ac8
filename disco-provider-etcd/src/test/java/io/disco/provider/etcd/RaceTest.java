package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.NotLeaderException;
import io.disco.fencing.DiscoException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.ThreadPerTask;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Races between close, cancel, timeout, commit, proclaim and resign (issue 10, items 4 to 6). The
 * session thread is held up at the critical point (an acquisition's answer queued behind a task that
 * waits on a latch) and let go at varying instants, so that each round lands the user's call at a
 * different moment relative to the commit. Every round checks the one invariant that matters: the
 * caller got the grant and the service holds it, or the key is gone; never neither, never both.
 */
class RaceTest {

    /** A thread per task: these tasks block. */
    private static final java.util.concurrent.Executor THREADS = ThreadPerTask.DAEMON;

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final int ROUNDS = 300;

    /** Holds the session thread until the returned latch is counted down. */
    private static CountDownLatch blockSessionThread(EtcdSession session) {
        CountDownLatch release = new CountDownLatch(1);
        session.runOnSession(() -> {
            try {
                release.await(30, SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return release;
    }

    /**
     * Waits until the session thread has run everything queued so far. A grant reaches the caller
     * while the session thread is still finishing the task that committed it; an acquisition started
     * before that task ends would be queued behind the next round's block.
     */
    private static void drainSessionThread(EtcdSession session) throws Exception {
        CompletableFuture<Void> drained = new CompletableFuture<>();
        session.runOnSession(() -> drained.complete(null));
        drained.get(5, SECONDS);
    }

    private static void spinMicros(long micros) {
        long until = System.nanoTime() + micros * 1000;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    // ---------------------------------------------------------------- item 4: close vs commit

    @Test
    void closeWhileTheAnswerIsQueuedHandsOutNoGrantAndLeavesNoKey() throws Exception {
        // The scenario needs the create Txn's answer queued behind the blocked session thread; on loaded cores the
        // answer can be processed before the block is queued (the grant then comes first): set it up again.
        for (int attempt = 1; attempt <= 5; attempt++) {
            String prefix = uniquePrefix("close-race");
            try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
                LockService a = session.newLock(prefix);
                CompletableFuture<Grant> f = a.lockAsync();
                CountDownLatch release = blockSessionThread(session); // queued behind the create Txn's sending
                awaitKeys(prefix, 1);
                if (f.isDone()) {
                    release.countDown(); // the answer beat the block: not the race under test
                    continue;
                }
                // The Txn was answered; its answer waits behind the blocked session thread. Close now.
                CompletableFuture<Void> closer = CompletableFuture.runAsync(a::close, THREADS);
                await().atMost(Duration.ofSeconds(5))
                        .untilAsserted(
                                () -> assertThrows(IllegalStateException.class, ((EtcdService<?, ?>) a)::checkOpen));
                release.countDown();
                closer.get(10, SECONDS);

                ExecutionException e = assertThrows(
                        ExecutionException.class,
                        () -> f.get(10, SECONDS),
                        "a closed service must not hand out a grant");
                assertTrue(
                        e.getCause() instanceof IllegalStateException, () -> "expected 'closed', got " + e.getCause());
                assertEquals(Optional.empty(), a.held());
                assertEquals(List.of(), keysUnder(ETCD.client(), prefix), "close() must leave no key behind");
                assertTrue(session.err().isEmpty());
                return;
            }
        }
        fail("the create Txn's answer was processed before the session thread could be blocked, 5 times in a row");
    }

    // ---------------------------------------------------------------- item 4: cancel vs commit

    /**
     * Where, in microseconds after the session thread is let go, the user's call meets the commit:
     * each round tries near the current estimate and moves it towards the boundary between "before
     * the commit" and "after it", so most rounds land within a few microseconds of the commit.
     */
    private static final class Boundary {
        private long estimate;
        private final long step;
        private int before;
        private int after;

        Boundary(long start, long step) {
            this.estimate = start;
            this.step = step;
        }

        long next() {
            return Math.max(0, estimate + ThreadLocalRandom.current().nextLong(-2 * step, 2 * step + 1));
        }

        void landed(boolean beforeTheCommit) {
            if (beforeTheCommit) {
                before++;
                estimate += step;
            } else {
                after++;
                estimate = Math.max(0, estimate - step);
            }
        }

        @Override
        public String toString() {
            return before + " rounds before the commit, " + after + " after, boundary about " + estimate + " µs";
        }
    }

    @Test
    void cancelRacingTheCommitEitherWithdrawsTheKeyOrLosesToTheGrant() throws Exception {
        String prefix = uniquePrefix("cancel-race");
        Boundary at = new Boundary(100, 3);
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            LockService a = session.newLock(prefix);
            for (int round = 0; round < ROUNDS; round++) {
                drainSessionThread(session);
                CompletableFuture<Grant> f = a.lockAsync();
                CountDownLatch release = blockSessionThread(session);
                awaitKeys(prefix, 1); // the create Txn is applied; its answer waits behind the blocked session thread
                long offset = at.next();
                release.countDown();
                spinMicros(offset);
                boolean cancelled = f.cancel(true);
                at.landed(cancelled);
                if (cancelled) {
                    assertThrows(CancellationException.class, f::join);
                    assertEquals(
                            Optional.empty(),
                            a.held(),
                            "round " + round + ": cancelled, yet the service holds the lock");
                    awaitKeys(prefix, 0);
                    // The next round blocks the session thread right after lockAsync(); an acquisition
                    // that waits for this withdrawal to settle first would be queued behind the block.
                    // A tryLock() returns only once it has settled.
                    assertTrue(a.tryLock().isPresent());
                    a.unlock();
                } else {
                    Grant g = f.get(10, SECONDS);
                    assertEquals(
                            Optional.of(g), a.held(), "round " + round + ": not cancelled, so the grant must be held");
                    assertEquals(List.of(g.key()), keysUnder(ETCD.client(), prefix));
                    a.unlock();
                }
            }
            assertTrue(session.err().isEmpty());
        }
        System.out.println("cancel vs commit: " + at);
    }

    @Test
    void aTimeoutRacingTheCommitEitherWithdrawsTheKeyOrReturnsTheGrant() throws Exception {
        String prefix = uniquePrefix("timeout-race");
        long timeoutMicros = 20_000;
        Boundary at = new Boundary(timeoutMicros - 1_000, 20);
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            LockService a = session.newLock(prefix);
            for (int round = 0; round < ROUNDS / 2; round++) {
                // The create Txn is sent only when the session thread goes on, about when lock()'s timeout ends.
                CountDownLatch release = blockSessionThread(session);
                CountDownLatch calling = new CountDownLatch(1);
                CompletableFuture<Grant> locked = CompletableFuture.supplyAsync(
                        () -> {
                            calling.countDown();
                            try {
                                return a.lock(Duration.ofNanos(timeoutMicros * 1000));
                            } catch (TimeoutException | DiscoException e) {
                                return null; // DiscoException: the timeout came before etcd's first answer
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        },
                        THREADS);
                calling.await(5, SECONDS);
                spinMicros(at.next());
                release.countDown();
                Grant g = locked.get(15, SECONDS);
                at.landed(g != null);
                if (g == null) {
                    assertEquals(
                            Optional.empty(),
                            a.held(),
                            "round " + round + ": timed out, yet the service holds the lock");
                    awaitKeys(prefix, 0);
                } else {
                    assertEquals(Optional.of(g), a.held());
                    assertEquals(List.of(g.key()), keysUnder(ETCD.client(), prefix));
                    a.unlock();
                }
            }
            assertTrue(session.err().isEmpty());
        }
        System.out.println("timeout vs commit (release of the session thread after lock(20 ms) began): " + at);
    }

    /** Waits (bounded) until exactly {@code n} keys are under {@code prefix}, polling every millisecond. */
    private static void awaitKeys(String prefix, int n) {
        await().pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertEquals(n, keysUnder(ETCD.client(), prefix).size(), "keys under " + prefix));
    }

    // ---------------------------------------------------------------- item 5: proclaim vs resign

    @Test
    void aProclamationRacingResignLeavesNothingOfTheOldTerm() throws Exception {
        String prefix = uniquePrefix("proclaim-resign");
        try (EtcdSession sa = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                EtcdSession sb = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            ElectionService a = sa.newElection(prefix);
            ElectionService b = sb.newElection(prefix);
            for (int round = 0; round < 20; round++) {
                Leadership term = a.campaign("v1", Duration.ofSeconds(10));
                CompletableFuture<Leadership> next = b.campaignAsync("b");
                CompletableFuture<Leadership> proclaimed =
                        a.campaignAsync("v2-" + round); // while leading: a proclamation
                spinMicros(round * 50L);
                a.resign();
                assertEquals(Optional.empty(), a.held(), "round " + round + ": resign() returned, yet a still leads");
                Leadership bLeads = next.get(10, SECONDS);
                try {
                    Leadership p = proclaimed.get(10, SECONDS);
                    assertEquals(
                            term.token(), p.token(), "a proclamation keeps the token of the term it was applied to");
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof NotLeaderException, () -> "unexpected " + e.getCause());
                }
                assertEquals(
                        Optional.empty(), a.held(), "round " + round + ": the proclamation revived the resigned term");
                assertEquals(Optional.of(bLeads), a.leader());
                // A new campaign must wait behind b, not return the dead term at once.
                assertThrows(TimeoutException.class, () -> a.campaign("v3", Duration.ofMillis(300)));
                b.resign();
            }
        }
    }

    // ---------------------------------------------------------------- item 6: names

    @Test
    void servicesWhoseKeysWouldOverlapOnOneSessionAreRefused() throws Exception {
        String p = uniquePrefix("names");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            session.newRWLock(p);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> session.newLock(p + "/write"));
            assertTrue(
                    e.getMessage().contains("'" + p + "'") && e.getMessage().contains("'" + p + "/write'"),
                    () -> "the message must name both services: " + e.getMessage());

            session.newLock(p + "-a");
            assertThrows(IllegalStateException.class, () -> session.newElection(p + "-a/b"));
            assertThrows(IllegalStateException.class, () -> session.newLock(p + "-a"));
            LockService sibling = session.newLock(p + "-ab"); // not nested: allowed
            assertTrue(sibling.tryLock().isPresent());
            sibling.unlock();

            // a parent named after its child, at any depth, between siblings that sort around it
            session.newLock(p + "-c/d/e");
            session.newLock(p + "-c.");
            session.newLock(p + "-c0");
            assertThrows(IllegalStateException.class, () -> session.newLock(p + "-c"));
            assertThrows(IllegalStateException.class, () -> session.newLock(p + "-c/d"));
            assertThrows(IllegalStateException.class, () -> session.newLock(p + "-c/d/e/f"));
            session.newLock(p + "-c/d/ef").close(); // a sibling of the child, not nested
            LockService child = session.newLock(p + "-c/x");
            child.close(); // a closed service frees its name
            session.newLock(p + "-c/x");
        }
    }
}
