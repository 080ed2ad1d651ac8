package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * What a client's lock offers beyond the plain {@code Lock} (issue 34, item 9 and the asynchronous acquisition): a
 * maximum hold time per acquisition; an asynchronous acquisition whose hold any thread closes, and whose
 * cancellation leaves no key; the listing of a name's holders and waiters ({@link Disco#claimants}). Extend it
 * with a {@link #backend()}.
 */
public abstract class ClientHoldsContract extends ContractSupport {

    @Test
    void aHoldPastItsMaximumHoldTimeIsReleasedAndReportedLost() throws Exception {
        String name = uniqueName("client-max-hold");
        Disco a = client(10);
        Disco b = client(10);
        FencedLock lock = a.lock(name).withMaxHold(Duration.ofMillis(500));
        lock.lock();
        FencingToken first = lock.token();
        assertEquals(1, keys(name).size());
        lock.done().toCompletableFuture().get(5, TimeUnit.SECONDS); // the maximum hold time passed
        assertKeys(name);
        assertTrue(lock.err().orElseThrow() instanceof LockLostException);

        FencedLock theirs = b.lock(name);
        assertTrue(theirs.tryLock(5, TimeUnit.SECONDS), "another client acquires at once");
        FencingToken second = theirs.token();
        assertTrue(second.isNewerThan(first), first + " then " + second);
        theirs.unlock();

        assertThrows(LockLostException.class, lock::token, "the first holder's token is stale");
        assertTrue(lock.isHeldByCurrentThread(), "held locally until it unlocks, as after a lost lease");
        LockLostException e = assertThrows(LockLostException.class, lock::unlock);
        assertTrue(e.getMessage().contains("maximum hold time"), e.getMessage());
        assertFalse(lock.isHeldByCurrentThread());
        assertKeys(name);

        FencedLock plain = a.lock(name); // the name works again, with no maximum hold
        assertTrue(plain.tryLock(5, TimeUnit.SECONDS));
        assertTrue(plain.token().isNewerThan(second));
        assertTrue(plain.withMaxHold(Duration.ofMillis(200)).tryLock(), "a nested hold through a view");
        Awaitility.await()
                .pollInSameThread()
                .during(Duration.ofMillis(600))
                .atMost(Duration.ofSeconds(3))
                .until(() -> keys(name).size() == 1 && plain.err().isEmpty());
        plain.unlock();
        plain.token(); // the first hold had no maximum hold time, and the nested one did not add one
        plain.unlock();
        assertKeys(name);

        assertThrows(NullPointerException.class, () -> plain.withMaxHold(null));
        assertThrows(IllegalArgumentException.class, () -> plain.withMaxHold(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> plain.withMaxHold(Duration.ofMillis(-1)));
    }

    @Test
    void aHoldReleasedBeforeItsMaximumHoldTimeIsNotTouchedByIt() throws Exception {
        String name = uniqueName("client-max-hold-released");
        Disco a = client(10);
        FencedLock lock = a.lock(name).withMaxHold(Duration.ofMillis(300));
        assertTrue(lock.tryLock());
        FencingToken first = lock.token();
        lock.unlock();
        FencedLock plain = a.lock(name);
        plain.lock();
        try {
            Awaitility.await()
                    .pollInSameThread()
                    .during(Duration.ofMillis(600))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> keys(name).size() == 1 && plain.err().isEmpty());
            assertTrue(plain.token().isNewerThan(first));
        } finally {
            plain.unlock();
        }
        assertEquals(List.of(), keys(name));
    }

    @Test
    void aCancelledAsynchronousAcquisitionLeavesNoKey() throws Exception {
        String name = uniqueName("client-async-cancel");
        Disco a = client(10);
        Disco b = client(10);
        FencedLock theirs = b.lock(name);
        theirs.lock();
        String theirKey = keys(name).get(0);
        CompletableFuture<Held<FencedHold>> mine = a.lock(name).lockAsync();
        awaitKeyCount(name, 2);
        assertStillWaiting(mine, "b holds");
        assertTrue(mine.cancel(true));
        awaitKeys(name, List.of(theirKey));
        theirs.unlock();
        assertKeys(name);
        Awaitility.await().atMost(SOON).until(() -> ClientContract.namesInUse(a) == 0);

        FencedLock again = a.lock(name); // the name works again for the client's threads
        assertTrue(again.tryLock(5, TimeUnit.SECONDS));
        again.unlock();
        assertKeys(name);
    }

    @Test
    void anAsynchronousHoldExcludesEveryThreadAndIsClosedByWhoeverHoldsIt() throws Exception {
        String name = uniqueName("client-async");
        Disco a = client(10);
        FencedLock lock = a.lock(name);
        Held<FencedHold> held = lock.lockAsync().get(5, TimeUnit.SECONDS);
        FencingToken token = held.token();
        assertEquals(1, keys(name).size());
        assertFalse(lock.isHeldByCurrentThread(), "no thread of the caller's owns it");
        assertFalse(lock.tryLock(), "the caller's thread is excluded too");
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<FencingToken> next = tokenOfOneHold(lock, other);
            assertStillWaiting(next, "the asynchronous hold is open");
            CompletableFuture.runAsync(held::close, THREADS)
                    .get(5, TimeUnit.SECONDS); // closed by another thread than the caller's
            assertTrue(next.get(5, TimeUnit.SECONDS).isNewerThan(token));
        } finally {
            other.shutdownNow();
        }
        held.close(); // once
        held.grant().done().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertKeys(name);

        Held<FencedHold> bounded =
                lock.withMaxHold(Duration.ofMillis(300)).lockAsync().get(5, TimeUnit.SECONDS);
        bounded.grant().done().toCompletableFuture().get(5, TimeUnit.SECONDS);
        assertThrows(LockLostException.class, bounded::token, "an asynchronous hold keeps its maximum hold time");
        assertTrue(bounded.grant().err().isPresent());
        assertThrows(LockLostException.class, bounded::close);
        assertKeys(name);
    }

    @Test
    void theListingShowsHoldersThenWaitersWithKeyLeaseTokenAndHolder() throws Exception {
        String name = uniqueName("client-claimants");
        Disco a = client(10);
        Disco b = client(10);
        assertEquals(List.of(), a.claimants(Primitive.LOCK, name));
        FencedLock mine = a.lock(name);
        mine.lock();
        ExecutorService waiter = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-waiter"));
        try {
            FencingToken token = mine.token();
            String holderKey = keys(name).get(0);
            Future<?> waiting = waiter.submit(() -> {
                FencedLock theirs = b.lock(name);
                theirs.lock();
                theirs.unlock();
                return null;
            });
            String waiterKey = awaitNewKey(name, List.of(holderKey));

            List<Claimant> listed = b.claimants(Primitive.LOCK, name);
            assertEquals(2, listed.size(), listed.toString());
            Claimant holder = listed.get(0);
            assertEquals(Claimant.Role.HOLDER, holder.role());
            assertEquals(holderKey, holder.key());
            assertEquals(0, holder.position());
            assertEquals(Claimant.Mode.EXCLUSIVE, holder.mode());
            assertEquals(java.util.Optional.of(token), holder.token());
            assertTrue(holder.leaseId() != 0);
            ClaimMetadata who = holder.madeByDisco().orElseThrow();
            assertEquals(Thread.currentThread().getName(), who.thread());
            assertEquals(ProcessHandle.current().pid(), who.pid());
            assertTrue(who.claimedAt().isPresent());
            Claimant waiting1 = listed.get(1);
            assertEquals(Claimant.Role.WAITER, waiting1.role());
            assertEquals(waiterKey, waiting1.key());
            assertEquals(1, waiting1.position());
            assertTrue(waiting1.token().isEmpty());
            assertTrue(
                    waiting1.leaseId() != 0 && waiting1.leaseId() != holder.leaseId(), "another client, another lease");
            assertEquals("the-waiter", waiting1.madeByDisco().orElseThrow().thread());

            mine.unlock();
            waiting.get(10, TimeUnit.SECONDS);
        } finally {
            waiter.shutdownNow();
        }
        awaitKeys(name, List.of());
        assertEquals(List.of(), a.claimants(Primitive.LOCK, name));

        String election = name + "-election";
        try (ElectionService candidate = a.election(election)) {
            Leadership leads = candidate.campaign("node-a", Duration.ofSeconds(5));
            List<Claimant> leaders = b.claimants(Primitive.ELECTION, election);
            assertEquals(1, leaders.size());
            assertEquals(leads.key(), leaders.get(0).key());
            assertEquals(java.util.Optional.of(leads.token()), leaders.get(0).token());
            assertEquals("node-a", leaders.get(0).value());
            assertTrue(leaders.get(0).madeByDisco().isEmpty(), "an election's value is the candidate's own");
            assertEquals(ClaimMetadata.EMPTY, leaders.get(0).metadata());
        }

        assertThrows(NullPointerException.class, () -> a.claimants(null, name));
        assertThrows(NullPointerException.class, () -> a.claimants(Primitive.LOCK, null));
        assertThrows(IllegalArgumentException.class, () -> a.claimants(Primitive.LOCK, name + "/"));
    }
}
