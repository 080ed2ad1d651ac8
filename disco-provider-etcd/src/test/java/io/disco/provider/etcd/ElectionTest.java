package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leader election against one real etcd member: terms, failover and fencing, observation, giving up, misuse. */
class ElectionTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static long leaders(ElectionService... services) {
        return Stream.of(services).filter(s -> s.held().isPresent()).count();
    }

    /** Asserts that {@code f} is still pending after giving it a fair chance to (wrongly) complete. */
    private static void assertStillWaiting(CompletableFuture<Leadership> f) {
        assertThrows(TimeoutException.class, () -> f.get(300, MILLISECONDS), "this candidate must not be leader yet");
    }

    // ---------------------------------------------------------------- 1. terms

    @Test
    void threeCandidatesOneLeaderResignHandsOverInCreationOrder() throws Exception {
        String prefix = uniquePrefix("election-three");
        try (ElectionService a = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService b = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService c = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            Leadership la = a.campaign("a");
            assertEquals("a", la.value());
            assertEquals(List.of(la.key()), keysUnder(ETCD.client(), prefix));
            assertTrue(la.key().startsWith(prefix + "/"));
            assertEquals(Optional.of(la), a.leader());
            assertEquals(la, a.campaign("a"), "campaign() while leading returns the held leadership");

            // b registers before c: creation order decides the succession.
            CompletableFuture<Leadership> fb = b.campaignAsync("b");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            CompletableFuture<Leadership> fc = c.campaignAsync("c");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 3);
            assertStillWaiting(fb);
            assertStillWaiting(fc);
            assertEquals(1, leaders(a, b, c));
            assertEquals(Optional.of(la), c.leader(), "a non-leader sees the leader too");

            // proclaim: new value, same term, same token.
            Leadership la2 = a.proclaim("a-v2");
            assertEquals(la.withValue("a-v2"), la2);
            assertEquals(la.token(), la2.token());
            assertEquals(Optional.of(la2), b.leader());
            assertEquals(Optional.of(la2), a.held());

            a.resign();
            Leadership lb = fb.get(5, SECONDS);
            assertEquals("b", lb.value());
            assertTrue(lb.token().isNewerThan(la.token()), "each term's token is greater than the last");
            assertTrue(a.held().isEmpty());
            assertStillWaiting(fc);
            assertEquals(1, leaders(a, b, c));
            assertEquals(Optional.of(lb), a.leader());

            Leadership lb2 = b.proclaim("b-v2");
            assertEquals(lb.token(), lb2.token());
            assertEquals(Optional.of(lb2), c.leader());

            b.resign();
            Leadership lc = fc.get(5, SECONDS);
            assertTrue(lc.token().isNewerThan(lb.token()));
            assertEquals(1, leaders(a, b, c));
            assertEquals(Optional.of(lc), b.leader());

            // a campaigns again: a new term behind c, with a new, greater token.
            CompletableFuture<Leadership> fa = a.campaignAsync("a-again");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            assertStillWaiting(fa);
            c.resign();
            Leadership la3 = fa.get(5, SECONDS);
            assertTrue(la3.token().isNewerThan(lc.token()));
            assertEquals(1, leaders(a, b, c));
        }
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix), "closing every service leaves no key");
    }

    // ---------------------------------------------------------------- 2. failover and fencing

    @Test
    void orphanedLeaderIsReplacedWithinTtlAndItsTokenRejected() throws Exception {
        String prefix = uniquePrefix("election-failover");
        Guard guard = Guard.create();
        try (EtcdSession sessionA = EtcdSession.open(ETCD.client(), ttl(2));
             ElectionService b = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            ElectionService a = sessionA.newElection(prefix);
            Leadership la = a.campaign("a");
            guard.check(la.token()); // a writes while it legitimately leads

            CompletableFuture<Leadership> fb = b.campaignAsync("b");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            assertStillWaiting(fb);

            long frozeAt = System.nanoTime();
            sessionA.orphan(); // a freezes: no more keepalives
            Leadership lb = fb.get(sessionA.ttl().toMillis() + 1000, MILLISECONDS);
            long tookMs = (System.nanoTime() - frozeAt) / 1_000_000;
            assertTrue(tookMs <= sessionA.ttl().toMillis() + 1000, "failover took " + tookMs + " ms");
            assertTrue(lb.token().isNewerThan(la.token()));

            guard.check(lb.token()); // the new leader writes
            TokenStaleException stale = assertThrows(TokenStaleException.class, () -> guard.check(la.token()),
                    "the old leader's token must be rejected once the new leader has written");
            assertEquals(la.token(), stale.token());

            a.done().toCompletableFuture().get(5, SECONDS);
            assertInstanceOf(LeadershipLostException.class, a.err().orElseThrow());
            assertTrue(a.held().isEmpty());
            assertThrows(NotLeaderException.class, () -> a.proclaim("zombie"));
            assertThrows(LeadershipLostException.class, () -> a.campaign("again"), "a lost service cannot campaign");
            assertEquals(Optional.of(lb), b.leader());
        }
    }

    // ---------------------------------------------------------------- 3. observation

    @Test
    void observerSeesEveryTermAndValueInOrderAcrossCompactionAndNothingAfterClose() throws Exception {
        String prefix = uniquePrefix("election-observe");
        BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
        BlockingQueue<Leadership> witness = new LinkedBlockingQueue<>();
        try (ElectionService observer = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService a = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService b = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService c = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            Observation observation = observer.observe(seen::add);
            Observation witnessing = observer.observe(witness::add);
            try {
                Leadership la = a.campaign("a1");
                assertEquals(la, seen.poll(5, SECONDS));

                CompletableFuture<Leadership> fb = b.campaignAsync("b1");
                await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
                CompletableFuture<Leadership> fc = c.campaignAsync("c1");
                await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 3);

                // Changes in quick succession, without waiting for the observer in between.
                a.proclaim("a2");
                a.proclaim("a3");
                a.resign();
                Leadership lb = fb.get(5, SECONDS);
                b.proclaim("b2");
                b.resign();
                Leadership lc = fc.get(5, SECONDS);

                assertEquals(la.withValue("a2"), seen.poll(5, SECONDS));
                assertEquals(la.withValue("a3"), seen.poll(5, SECONDS));
                assertEquals(lb, seen.poll(5, SECONDS));
                assertEquals(lb.withValue("b2"), seen.poll(5, SECONDS));
                assertEquals(lc, seen.poll(5, SECONDS));

                // Compact etcd's history mid-observation: the next change still arrives.
                ETCD.client().getKVClient().compact(Etcd.revision(ETCD.client())).get(5, SECONDS);
                Leadership lc2 = c.proclaim("c2");
                assertEquals(lc2, seen.poll(5, SECONDS));

                // The observer never campaigned.
                assertTrue(observer.held().isEmpty());
                assertEquals(1, leaders(a, b, c));

                observation.close();
                Leadership lc3 = c.proclaim("c3");
                // The witness (opened at the same time) proves the change was observable...
                Leadership last;
                do {
                    last = witness.poll(5, SECONDS);
                    assertNotNull(last, "the witness observation stopped delivering");
                } while (!last.equals(lc3));
                // ...but the closed observation delivered nothing more.
                assertNull(seen.poll(), "a closed observation must deliver nothing");
            } finally {
                observation.close();
                witnessing.close();
            }
        }
    }

    @Test
    void observerThatStartsLateGetsTheCurrentLeaderFirst() throws Exception {
        String prefix = uniquePrefix("election-observe-late");
        try (ElectionService a = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService observer = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            Leadership la = a.campaign("a");
            a.proclaim("a2");
            BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
            try (Observation ignored = observer.observe(seen::add)) {
                assertEquals(la.withValue("a2"), seen.poll(5, SECONDS));
            }
        }
    }

    // ---------------------------------------------------------------- 4. giving up

    @Test
    void campaignThatTimesOutIsInterruptedOrCancelledLeavesNoKey() throws Exception {
        String prefix = uniquePrefix("election-giveup");
        try (ElectionService holder = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService other = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            Leadership held = holder.campaign("holder");
            List<String> onlyHolder = List.of(held.key());

            assertThrows(TimeoutException.class, () -> other.campaign("other", Duration.ofMillis(500)));
            assertEquals(onlyHolder, keysUnder(ETCD.client(), prefix));

            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    other.campaign("other");
                    outcome.complete(null);
                } catch (Throwable e) {
                    outcome.complete(e);
                }
            }, "interrupted-candidate");
            t.start();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            t.interrupt();
            assertInstanceOf(InterruptedException.class, outcome.get(5, SECONDS));
            assertEquals(onlyHolder, keysUnder(ETCD.client(), prefix));

            CompletableFuture<Leadership> async = other.campaignAsync("other");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            assertTrue(async.cancel(true));
            assertThrows(CancellationException.class, async::join);
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).equals(onlyHolder));

            // After all that, the other candidate still wins once the holder resigns.
            holder.resign();
            Leadership lo = other.campaign("other", Duration.ofSeconds(5));
            assertTrue(lo.token().isNewerThan(held.token()));
            assertEquals(Optional.of(lo), holder.leader());
        }
    }

    @Test
    void campaignRightAfterACancelledOneIsNotUndoneByItsCleanup() throws Exception {
        String prefix = uniquePrefix("election-recampaign");
        try (ElectionService holder = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             ElectionService other = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            Leadership held = holder.campaign("holder");
            for (int i = 0; i < 5; i++) {
                CompletableFuture<Leadership> cancelled = other.campaignAsync("cancelled-" + i);
                assertTrue(cancelled.cancel(true));
                // Campaign again at once, while the cancelled candidacy's key may still be being withdrawn.
                CompletableFuture<Leadership> again = other.campaignAsync("again-" + i);
                await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(5))
                        .until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
                assertStillWaitingBriefly(again);
                assertTrue(again.cancel(true));
                await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(5))
                        .until(() -> keysUnder(ETCD.client(), prefix).equals(List.of(held.key())));
            }
            CompletableFuture<Leadership> cancelled = other.campaignAsync("cancelled");
            assertTrue(cancelled.cancel(true));
            CompletableFuture<Leadership> last = other.campaignAsync("last");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            holder.resign();
            Leadership lo = last.get(5, SECONDS);
            assertEquals("last", lo.value());
            assertEquals(List.of(lo.key()), keysUnder(ETCD.client(), prefix), "the new candidacy's key must survive");
            assertEquals(lo.withValue("last-2"), other.proclaim("last-2"));
        }
    }

    private static void assertStillWaitingBriefly(CompletableFuture<Leadership> f) {
        assertFalse(f.isDone() && !f.isCancelled() && !f.isCompletedExceptionally(), "must not lead while the holder does");
    }

    @Test
    void campaignWhoseLeaseIsRevokedWhileWaitingFailsAndNeverWins() throws Exception {
        String prefix = uniquePrefix("election-revoked");
        try (ElectionService holder = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10));
             EtcdSession waiterSession = EtcdSession.open(ETCD.client(), ttl(30))) {
            Leadership held = holder.campaign("holder");
            ElectionService waiter = waiterSession.newElection(prefix);
            CompletableFuture<Leadership> waiting = waiter.campaignAsync("waiter");
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);

            ETCD.client().getLeaseClient().revoke(waiterSession.leaseId()).get(5, SECONDS);

            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
            assertInstanceOf(LeadershipLostException.class, e.getCause());
            assertEquals(List.of(held.key()), keysUnder(ETCD.client(), prefix));
            waiter.done().toCompletableFuture().get(5, SECONDS);
            assertTrue(waiter.err().isPresent());

            holder.resign();
            assertEquals(Optional.empty(), holder.leader(), "nobody leads: the revoked candidate never wins");
            assertTrue(waiter.held().isEmpty(), "the revoked candidate must never report leadership");
            assertThrows(LeadershipLostException.class, () -> waiter.campaign("again"));
        }
    }

    // ---------------------------------------------------------------- 5. misuse and the empty election

    @Test
    void notLeaderProclaimFailsResignIsANoOpAndNobodyLeadsAnEmptyElection() throws Exception {
        String prefix = uniquePrefix("election-notleader");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(10));
             ElectionService b = EtcdProvider.newElection(ETCD.client(), prefix, ttl(10))) {
            ElectionService a = session.newElection(prefix);
            assertEquals(Optional.empty(), a.leader(), "leader() is empty while nobody campaigns");
            assertThrows(NotLeaderException.class, () -> a.proclaim("x"));
            a.resign(); // not the leader: nothing happens
            assertEquals(List.of(), keysUnder(ETCD.client(), prefix));

            Leadership lb = b.campaign("b");
            assertThrows(NotLeaderException.class, () -> a.proclaim("x"));
            a.resign();
            assertEquals(Optional.of(lb), a.leader(), "resign() by a non-leader must not disturb the leader");
            assertEquals(List.of(lb.key()), keysUnder(ETCD.client(), prefix));

            // A leader whose key was deleted behind its back is no longer leader.
            ETCD.client().getKVClient().delete(Etcd.bytes(lb.key())).get(5, SECONDS);
            assertThrows(NotLeaderException.class, () -> b.proclaim("b2"));
            assertTrue(b.held().isEmpty());
            assertEquals(Optional.empty(), a.leader());

            // Bad arguments fail at once and name the argument.
            IllegalArgumentException nullValue = assertThrows(IllegalArgumentException.class, () -> a.campaign(null));
            assertTrue(nullValue.getMessage().contains("value"), nullValue.getMessage());
            assertThrows(IllegalArgumentException.class, () -> a.observe(null));
            assertThrows(IllegalArgumentException.class, () -> a.campaign("a", Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> session.newElection(" "));
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> session.newElection(prefix));
            assertTrue(twice.getMessage().contains(prefix), twice.getMessage());

            a.close();
            assertThrows(IllegalStateException.class, a::leader);
            assertThrows(IllegalStateException.class, () -> a.campaign("a"));
            assertFalse(a.err().isPresent(), "a plain close is not a loss");
            a.done().toCompletableFuture().get(5, SECONDS);
        }
    }
}
