package io.disco.contract;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.Held;
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

/**
 * The {@link ElectionService} contract: one leader, succession in campaign order, tokens that grow with every
 * term and stay with {@code proclaim}, failover within the time to live with the old leader's token rejected,
 * observation in order, every way of giving up leaving no key, a candidate whose lease ends never winning, loss,
 * misuse and close. Extend it with a {@link #backend()}.
 */
public abstract class ElectionContract extends ContractSupport {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static long leaders(ElectionService... services) {
        return Stream.of(services).filter(s -> s.held().isPresent()).count();
    }

    private static void assertStillCampaigning(CompletableFuture<Leadership> f) {
        assertStillWaiting(f, "this candidate must not be leader yet");
    }

    // ---------------------------------------------------------------- terms

    @Test
    void threeCandidatesOneLeaderResignHandsOverInCreationOrder() throws Exception {
        String name = uniqueName("election-three");
        ElectionService a = owner(10).newElection(name);
        ElectionService b = owner(10).newElection(name);
        ElectionService c = owner(10).newElection(name);
        Leadership la = a.campaign("a");
        assertEquals("a", la.value());
        assertKeys(name, la.key());
        assertEquals(Optional.of(la), a.leader());
        assertEquals(la, a.campaign("a"), "campaign() while leading returns the held leadership");

        // b registers before c: creation order decides the succession.
        CompletableFuture<Leadership> fb = b.campaignAsync("b");
        awaitKeyCount(name, 2);
        CompletableFuture<Leadership> fc = c.campaignAsync("c");
        awaitKeyCount(name, 3);
        assertStillCampaigning(fb);
        assertStillCampaigning(fc);
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
        assertStillCampaigning(fc);
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
        awaitKeyCount(name, 2);
        assertStillCampaigning(fa);
        c.resign();
        Leadership la3 = fa.get(5, SECONDS);
        assertTrue(la3.token().isNewerThan(lc.token()));
        assertEquals(1, leaders(a, b, c));
        a.close();
        b.close();
        c.close();
        assertKeys(name); // closing every service leaves no key
    }

    // ---------------------------------------------------------------- failover and fencing

    @Test
    void frozenLeaderIsReplacedWithinTtlAndItsTokenRejected() throws Exception {
        String name = uniqueName("election-failover");
        Guard guard = Guard.create();
        int ttlSeconds = 2;
        DiscoBackend.Owner ownerA = owner(ttlSeconds);
        ElectionService a = ownerA.newElection(name);
        ElectionService b = owner(10).newElection(name);
        Leadership la = a.campaign("a");
        guard.check(la.token()); // a writes while it legitimately leads

        CompletableFuture<Leadership> fb = b.campaignAsync("b");
        awaitKeyCount(name, 2);
        assertStillCampaigning(fb);

        long frozeAt = System.nanoTime();
        backend().freeze(ownerA); // a freezes: no more renewals
        long limitMs = ttlSeconds * 1000L + 1000;
        Leadership lb = fb.get(limitMs, MILLISECONDS);
        long tookMs = (System.nanoTime() - frozeAt) / 1_000_000;
        assertTrue(tookMs <= limitMs, "failover took " + tookMs + " ms");
        assertTrue(lb.token().isNewerThan(la.token()));

        guard.check(lb.token()); // the new leader writes
        TokenStaleException stale = assertThrows(
                TokenStaleException.class,
                () -> guard.check(la.token()),
                "the old leader's token must be rejected once the new leader has written");
        assertEquals(la.token(), stale.token());

        a.done().toCompletableFuture().get(5, SECONDS);
        assertInstanceOf(LeadershipLostException.class, a.err().orElseThrow());
        assertTrue(a.held().isEmpty());
        assertThrows(NotLeaderException.class, () -> a.proclaim("zombie"));
        assertThrows(LeadershipLostException.class, () -> a.campaign("again"), "a lost service cannot campaign");
        assertEquals(Optional.of(lb), b.leader());
    }

    // ---------------------------------------------------------------- observation

    @Test
    void observerSeesEveryTermAndValueInOrderAcrossCompactionAndNothingAfterClose() throws Exception {
        String name = uniqueName("election-observe");
        BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
        BlockingQueue<Leadership> witness = new LinkedBlockingQueue<>();
        ElectionService observer = owner(10).newElection(name);
        ElectionService a = owner(10).newElection(name);
        ElectionService b = owner(10).newElection(name);
        ElectionService c = owner(10).newElection(name);
        Observation observation = observer.observe(seen::add);
        Observation witnessing = observer.observe(witness::add);
        try {
            Leadership la = a.campaign("a1");
            assertEquals(la, seen.poll(5, SECONDS));

            CompletableFuture<Leadership> fb = b.campaignAsync("b1");
            awaitKeyCount(name, 2);
            CompletableFuture<Leadership> fc = c.campaignAsync("c1");
            awaitKeyCount(name, 3);

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

            // Compact the backend's history mid-observation: the next change still arrives.
            backend().compactHistory();
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

    @Test
    void observerThatStartsLateGetsTheCurrentLeaderFirst() throws Exception {
        String name = uniqueName("election-observe-late");
        ElectionService a = owner(10).newElection(name);
        ElectionService observer = owner(10).newElection(name);
        Leadership la = a.campaign("a");
        a.proclaim("a2");
        BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
        try (Observation ignored = observer.observe(seen::add)) {
            assertEquals(la.withValue("a2"), seen.poll(5, SECONDS));
        }
    }

    // ---------------------------------------------------------------- giving up

    @Test
    void campaignThatTimesOutIsInterruptedOrCancelledLeavesNoKey() throws Exception {
        String name = uniqueName("election-giveup");
        ElectionService holder = owner(10).newElection(name);
        ElectionService other = owner(10).newElection(name);
        Leadership held = holder.campaign("holder");
        List<String> onlyHolder = List.of(held.key());

        assertThrows(TimeoutException.class, () -> other.campaign("other", Duration.ofMillis(500)));
        assertEquals(onlyHolder, keys(name));

        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        other.campaign("other");
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(e);
                    }
                },
                "interrupted-candidate");
        t.start();
        awaitKeyCount(name, 2);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, outcome.get(5, SECONDS));
        assertEquals(onlyHolder, keys(name));

        CompletableFuture<Leadership> async = other.campaignAsync("other");
        awaitKeyCount(name, 2);
        assertTrue(async.cancel(true));
        assertThrows(CancellationException.class, async::join);
        awaitKeys(name, onlyHolder);

        // After all that, the other candidate still wins once the holder resigns.
        holder.resign();
        Leadership lo = other.campaign("other", Duration.ofSeconds(5));
        assertTrue(lo.token().isNewerThan(held.token()));
        assertEquals(Optional.of(lo), holder.leader());
    }

    @Test
    void campaignRightAfterACancelledOneIsNotUndoneByItsCleanup() throws Exception {
        String name = uniqueName("election-recampaign");
        ElectionService holder = owner(10).newElection(name);
        ElectionService other = owner(10).newElection(name);
        Leadership held = holder.campaign("holder");
        for (int i = 0; i < 5; i++) {
            CompletableFuture<Leadership> cancelled = other.campaignAsync("cancelled-" + i);
            assertTrue(cancelled.cancel(true));
            // Campaign again at once, while the cancelled candidacy's key may still be being withdrawn.
            CompletableFuture<Leadership> again = other.campaignAsync("again-" + i);
            awaitKeyCount(name, 2);
            assertNotGranted(again, "must not lead while the holder does");
            assertTrue(again.cancel(true));
            awaitKeys(name, List.of(held.key()));
        }
        CompletableFuture<Leadership> cancelled = other.campaignAsync("cancelled");
        assertTrue(cancelled.cancel(true));
        CompletableFuture<Leadership> last = other.campaignAsync("last");
        awaitKeyCount(name, 2);
        holder.resign();
        Leadership lo = last.get(5, SECONDS);
        assertEquals("last", lo.value());
        assertEquals(List.of(lo.key()), keys(name), "the new candidacy's key must survive");
        assertEquals(lo.withValue("last-2"), other.proclaim("last-2"));
    }

    @Test
    void campaignWhoseLeaseIsRevokedWhileWaitingFailsAndNeverWins() throws Exception {
        String name = uniqueName("election-revoked");
        ElectionService holder = owner(10).newElection(name);
        DiscoBackend.Owner waiterOwner = owner(30);
        Leadership held = holder.campaign("holder");
        ElectionService waiter = waiterOwner.newElection(name);
        CompletableFuture<Leadership> waiting = waiter.campaignAsync("waiter");
        awaitKeyCount(name, 2);

        backend().endOwner(waiterOwner);

        ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
        assertInstanceOf(LeadershipLostException.class, e.getCause());
        assertKeys(name, held.key());
        waiter.done().toCompletableFuture().get(5, SECONDS);
        assertTrue(waiter.err().isPresent());

        holder.resign();
        assertEquals(Optional.empty(), holder.leader(), "nobody leads: the revoked candidate never wins");
        assertTrue(waiter.held().isEmpty(), "the revoked candidate must never report leadership");
        assertThrows(LeadershipLostException.class, () -> waiter.campaign("again"));
    }

    // ---------------------------------------------------------------- misuse, loss and the empty election

    @Test
    void notLeaderProclaimFailsResignIsANoOpAndNobodyLeadsAnEmptyElection() throws Exception {
        String name = uniqueName("election-notleader");
        DiscoBackend.Owner owner = owner(10);
        ElectionService a = owner.newElection(name);
        ElectionService b = owner(10).newElection(name);
        assertEquals(Optional.empty(), a.leader(), "leader() is empty while nobody campaigns");
        assertThrows(NotLeaderException.class, () -> a.proclaim("x"));
        a.resign(); // not the leader: nothing happens
        assertKeys(name);

        Leadership lb = b.campaign("b");
        assertThrows(NotLeaderException.class, () -> a.proclaim("x"));
        a.resign();
        assertEquals(Optional.of(lb), a.leader(), "resign() by a non-leader must not disturb the leader");
        assertKeys(name, lb.key());

        // A leader whose key was deleted behind its back is no longer leader.
        backend().deleteKey(lb.key());
        assertThrows(NotLeaderException.class, () -> b.proclaim("b2"));
        assertTrue(b.held().isEmpty());
        assertEquals(Optional.empty(), a.leader());

        // Bad arguments fail at once and name the argument.
        NullPointerException nullValue = assertThrows(NullPointerException.class, () -> a.campaign(null));
        assertTrue(nullValue.getMessage().contains("value"), nullValue.getMessage());
        assertThrows(NullPointerException.class, () -> a.observe(null));
        assertThrows(
                NullPointerException.class,
                () -> a.campaign("a", null)); // zero or less is one try (UniformRulesContract)
        assertThrows(IllegalArgumentException.class, () -> owner.newElection(" "));
        assertThrows(NullPointerException.class, () -> owner.newElection(null));
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> owner.newElection(name));
        assertTrue(twice.getMessage().contains(name), twice.getMessage());

        a.close();
        assertThrows(IllegalStateException.class, a::leader);
        assertThrows(IllegalStateException.class, () -> a.campaign("a"));
        assertFalse(a.err().isPresent(), "a plain close is not a loss");
        a.done().toCompletableFuture().get(5, SECONDS);
    }

    @Test
    void aLeadershipWhoseKeyIsDeletedIsLost() throws Exception {
        String name = uniqueName("deleted-held-election");
        ElectionService election = owner(30).newElection(name);
        Leadership l = election.campaign("me");
        backend().deleteKey(l.key());
        election.done().toCompletableFuture().get(1, SECONDS);
        assertInstanceOf(LeadershipLostException.class, election.err().orElseThrow());
        assertThrows(LeadershipLostException.class, election::resign);
    }

    // ---------------------------------------------------------------- scoped and asynchronous release

    @Test
    void aScopedTermResignsAndKeepsTheCandidate() throws Exception {
        String name = uniqueName("scoped-election");
        ElectionService e = owner(10).newElection(name);
        try (Held<Leadership> term = e.hold("a", WAIT)) {
            assertEquals("a", term.grant().value());
            assertEquals(term.grant(), e.leader().orElseThrow());
        }
        assertTrue(e.held().isEmpty());
        assertTrue(e.leader().isEmpty(), "resigned");
        try (Held<Leadership> again = e.hold("b", WAIT)) {
            assertEquals("b", again.grant().value());
        }
    }

    @Test
    void asynchronousProclaimAndResignCompleteOffTheBackendThreads() throws Exception {
        String name = uniqueName("async-election");
        ElectionService election = owner(10).newElection(name);
        election.campaign("a", WAIT);
        CompletableFuture<Leadership> proclaimed = election.proclaimAsync("b");
        assertCompletesOffBackendThreads(proclaimed);
        assertEquals("b", proclaimed.get(1, SECONDS).value());
        assertCompletesOffBackendThreads(election.resignAsync());
        assertTrue(election.leader().isEmpty());
    }
}
