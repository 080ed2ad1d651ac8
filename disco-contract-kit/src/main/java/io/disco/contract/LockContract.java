package io.disco.contract;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The {@link LockService} contract: exclusion, strictly increasing tokens, a zombie rejected by the guard, every
 * way of giving up leaving no key, a waiter whose lease ends never winning, loss, scoped and asynchronous
 * release, bad input and close. Extend it with a {@link #backend()}.
 */
public abstract class LockContract extends ContractSupport {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void uncontendedLockUnlock() throws Exception {
        String name = uniqueName("basic");
        LockService lock = owner(5).newLock(name);
        Grant g = lock.lock();
        assertKeys(name, g.key());
        assertEquals(g, lock.lock(), "lock() while holding returns the held grant");
        assertEquals(Optional.of(g), lock.held());
        lock.unlock();
        assertKeys(name);
        Grant g2 = lock.lock();
        assertTrue(g2.token().isNewerThan(g.token()));
        lock.close();
        assertKeys(name);
    }

    @Test
    void mutualExclusionAndTokensIncreaseInCriticalSectionOrder() throws Exception {
        String name = uniqueName("mutex");
        int owners = 6;
        int rounds = 20;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Long> tokensInOrder = new ArrayList<>();
        List<LockService> locks = new ArrayList<>();
        for (int o = 0; o < owners; o++) {
            locks.add(owner(10).newLock(name));
        }
        ExecutorService pool = Executors.newFixedThreadPool(owners);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (LockService lock : locks) {
                futures.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        Grant g = lock.lock(Duration.ofSeconds(30));
                        int now = inside.incrementAndGet();
                        maxInside.accumulateAndGet(now, Math::max);
                        synchronized (tokensInOrder) {
                            tokensInOrder.add(g.token().value());
                        }
                        Thread.yield();
                        inside.decrementAndGet();
                        lock.unlock();
                    }
                    lock.close();
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(90, SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, maxInside.get(), "two owners were inside at once");
        assertEquals(owners * rounds, tokensInOrder.size());
        for (int i = 1; i < tokensInOrder.size(); i++) {
            assertTrue(
                    tokensInOrder.get(i) > tokensInOrder.get(i - 1),
                    "token " + tokensInOrder.get(i) + " at position " + i + " is not above its predecessor "
                            + tokensInOrder.get(i - 1));
        }
        assertKeys(name);
    }

    @Test
    void zombieIsRejectedByTheGuard() throws Exception {
        String name = uniqueName("zombie");
        Guard guard = Guard.create();
        DiscoBackend.Owner ownerA = owner(2);
        LockService a = ownerA.newLock(name);
        LockService b = owner(10).newLock(name);
        Grant ga = a.lock();
        guard.check(ga.token()); // A writes while it legitimately holds the lock

        backend().freeze(ownerA); // A freezes: no more renewals
        Grant gb = b.lock(Duration.ofSeconds(10)); // B gets in once A's lease expires
        assertTrue(gb.token().isNewerThan(ga.token()));
        guard.check(gb.token());

        TokenStaleException stale = assertThrows(TokenStaleException.class, () -> guard.check(ga.token()));
        assertEquals(ga.token(), stale.token());
        a.done().toCompletableFuture().get(5, SECONDS);
        assertTrue(a.err().isPresent(), "err() must say why A lost the lock");
        assertTrue(a.held().isEmpty());
        assertThrows(LockLostException.class, a::lock, "a lost service cannot acquire again");
    }

    @Test
    void givingUpLeavesOnlyTheHoldersKey() throws Exception {
        String name = uniqueName("giveup");
        LockService holder = owner(10).newLock(name);
        LockService other = owner(10).newLock(name);
        Grant held = holder.lock();
        List<String> onlyHolder = List.of(held.key());

        assertTrue(other.tryLock().isEmpty(), "tryLock must be empty while held");
        assertEquals(onlyHolder, keys(name));

        assertThrows(TimeoutException.class, () -> other.lock(Duration.ofMillis(500)));
        assertEquals(onlyHolder, keys(name));

        CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                other.lock();
                interrupted.complete(null);
            } catch (Throwable e) {
                interrupted.complete(e);
            }
        });
        t.start();
        awaitKeyCount(name, 2);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, interrupted.get(5, SECONDS));
        assertEquals(onlyHolder, keys(name));

        CompletableFuture<Grant> async = other.lockAsync();
        awaitKeyCount(name, 2);
        assertTrue(async.cancel(true));
        assertThrows(CancellationException.class, async::join);
        awaitKeys(name, onlyHolder);

        // After all that, the other owner still gets the lock once it is free.
        holder.unlock();
        Grant g = other.lock(Duration.ofSeconds(5));
        assertTrue(g.token().isNewerThan(held.token()));
    }

    @Test
    void lockRightAfterACancelledOneIsNotUndoneByItsCleanup() throws Exception {
        String name = uniqueName("relock");
        LockService holder = owner(10).newLock(name);
        LockService other = owner(10).newLock(name);
        Grant held = holder.lock();
        for (int i = 0; i < 5; i++) {
            assertTrue(other.lockAsync().cancel(true));
            // Ask again at once, while the cancelled request's key may still be being withdrawn.
            CompletableFuture<Grant> again = other.lockAsync();
            awaitKeyCount(name, 2);
            assertFalse(again.isDone(), "must not acquire while the holder holds the lock");
            assertTrue(again.cancel(true));
            awaitKeys(name, List.of(held.key()));
        }
        assertTrue(other.lockAsync().cancel(true));
        CompletableFuture<Grant> last = other.lockAsync();
        awaitKeyCount(name, 2);
        holder.unlock();
        Grant g = last.get(5, SECONDS);
        assertEquals(List.of(g.key()), keys(name), "the new request's key must survive the old one's cleanup");
        assertTrue(other.tryLock().isPresent());
    }

    @Test
    void waiterWhoseLeaseIsRevokedFailsPromptlyAndLeavesNoKey() throws Exception {
        String name = uniqueName("revoked");
        LockService holder = owner(10).newLock(name);
        DiscoBackend.Owner waiterOwner = owner(30);
        Grant held = holder.lock();
        LockService waiter = waiterOwner.newLock(name);
        CompletableFuture<Grant> waiting = waiter.lockAsync();
        awaitKeyCount(name, 2);

        backend().endOwner(waiterOwner);

        ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
        assertInstanceOf(LockLostException.class, e.getCause());
        assertKeys(name, held.key());
        waiter.done().toCompletableFuture().get(5, SECONDS);
        assertTrue(waiter.err().isPresent());
        holder.unlock();
        assertTrue(waiter.held().isEmpty(), "the revoked waiter must never report the lock as acquired");
    }

    @Test
    void historyCompactedWhileWaitingIsNotAFailure() throws Exception {
        String name = uniqueName("compact");
        LockService holder = owner(10).newLock(name);
        LockService waiter = owner(10).newLock(name);
        Grant held = holder.lock();
        CompletableFuture<Grant> waiting = waiter.lockAsync();
        awaitKeyCount(name, 2);
        LockService noise = owner(10).newLock(uniqueName("compact-noise"));
        for (int i = 0; i < 5; i++) {
            noise.lock();
            noise.unlock();
        }
        backend().compactHistory();
        assertFalse(waiting.isDone());
        holder.unlock();
        Grant g = waiting.get(5, SECONDS);
        assertTrue(g.token().isNewerThan(held.token()));
    }

    @Test
    void badInputFailsAtOnceAndChangesNothing() throws Exception {
        String name = uniqueName("input");
        DiscoBackend.Owner owner = owner(5);
        NullPointerException n = assertThrows(NullPointerException.class, () -> owner.newLock(null));
        assertFalse(n.getMessage() == null || n.getMessage().isBlank(), "the message names the problem");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> owner.newLock("  "));
        assertFalse(e.getMessage() == null || e.getMessage().isBlank(), "the message names the problem");

        LockService first = owner.newLock(name);
        IllegalStateException dup = assertThrows(IllegalStateException.class, () -> owner.newLock(name));
        assertTrue(dup.getMessage().contains(name), dup.getMessage());
        assertEquals(
                "timeout",
                assertThrows(NullPointerException.class, () -> first.lock((Duration) null))
                        .getMessage());
        // A timeout of zero or less is no bad input: one try, at once (UniformRulesContract).
        first.close();
        owner.newLock(name).close(); // the name is free again once its service closed
        assertKeys(name);
    }

    @Test
    void closeReleasesPromptlyAndIsNoLoss() throws Exception {
        String name = uniqueName("close");
        LockService a = owner(30).newLock(name);
        LockService b = owner(30).newLock(name);
        Grant ga = a.lock();
        CompletableFuture<Grant> waiting = b.lockAsync();
        awaitKeyCount(name, 2);
        a.close();
        // Far sooner than A's 30 s TTL: close() released the lock.
        Grant gb = waiting.get(3, SECONDS);
        assertTrue(gb.token().isNewerThan(ga.token()));
        a.done().toCompletableFuture().get(1, SECONDS);
        assertTrue(a.err().isEmpty(), "a plain close is not a loss");
        assertThrows(IllegalStateException.class, a::tryLock);
        a.close(); // idempotent
    }

    @Test
    void aServiceClosedOnASharedOwnerReleasesButKeepsTheOwner() throws Exception {
        String name = uniqueName("shared-close");
        DiscoBackend.Owner shared = owner(30);
        LockService other = owner(10).newLock(name);
        LockService lock = shared.newLock(name);
        FencingToken first = lock.lock().token();
        lock.close();
        assertTrue(other.tryLock().isPresent(), "close() released the lock");
        assertFalse(shared.done().toCompletableFuture().isDone(), "the shared owner stays open");
        assertTrue(other.held().orElseThrow().token().isNewerThan(first));
        LockService again = shared.newLock(uniqueName("shared-close-again"));
        assertTrue(again.tryLock().isPresent(), "the owner still serves new services");
    }

    // ---------------------------------------------------------------- loss

    @Test
    void aHeldLockWhoseKeyIsDeletedIsLost() throws Exception {
        String name = uniqueName("deleted-held-lock");
        LockService lock = owner(30).newLock(name);
        LockService other = owner(30).newLock(name);
        Grant g = lock.lock();
        backend().deleteKey(g.key()); // an operator
        lock.done().toCompletableFuture().get(1, SECONDS);
        assertInstanceOf(LockLostException.class, lock.err().orElseThrow());
        assertEquals(Optional.empty(), lock.held());
        assertThrows(LockLostException.class, lock::unlock, "the release reports the loss");
        assertTrue(other.lock(Duration.ofSeconds(5)).token().isNewerThan(g.token()));
    }

    @Test
    void aReleaseThatFindsTheLeaseGoneReportsTheLoss() throws Exception {
        String name = uniqueName("gone-before-release");
        // The key goes with a revoke of the lease from outside; the release may come before the owner learns
        // of it: either way unlock() must throw.
        DiscoBackend.Owner owner = owner(30);
        LockService lock = owner.newLock(name);
        lock.lock();
        backend().endOwner(owner);
        assertThrows(LockLostException.class, lock::unlock);
        lock.done().toCompletableFuture().get(1, SECONDS);
    }

    // ---------------------------------------------------------------- scoped and asynchronous release

    @Test
    void aScopedLockReleasesTheGrantAndKeepsTheService() throws Exception {
        String name = uniqueName("scoped-lock");
        LockService lock = owner(10).newLock(name);
        long first;
        try (Held<Grant> held = lock.hold(WAIT)) {
            first = held.token().value();
            assertEquals(held.grant().token(), lock.held().orElseThrow().token());
            assertEquals(1, keys(name).size());
        }
        assertTrue(lock.held().isEmpty());
        assertKeys(name);
        try (Held<Grant> again = lock.hold(WAIT)) {
            assertTrue(again.token().value() > first, "the service is still usable");
        }
    }

    @Test
    void aScopedHoldWhoseGrantWasLostThrowsTheLossOnClose() throws Exception {
        String name = uniqueName("scoped-lost");
        LockService lock = owner(10).newLock(name);
        Held<Grant> held = lock.hold(WAIT);
        backend().deleteKey(held.grant().key());
        lock.done().toCompletableFuture().get(10, SECONDS);
        assertThrows(LockLostException.class, held::close);
        held.close(); // once only
    }

    @Test
    void asynchronousReleasesCompleteOffTheBackendThreads() throws Exception {
        String name = uniqueName("async-release");
        LockService lock = owner(10).newLock(name);
        lock.lock(WAIT);
        CompletableFuture<Void> unlocked = lock.unlockAsync();
        assertCompletesOffBackendThreads(unlocked);
        assertTrue(lock.held().isEmpty());
        assertKeys(name);
        unlocked.get(1, SECONDS);
        lock.unlockAsync().get(10, SECONDS); // nothing held: completes normally
    }

    @Test
    void anAsynchronousReleaseOfALostGrantFailsWithTheLoss() throws Exception {
        String name = uniqueName("async-lost");
        LockService lock = owner(10).newLock(name);
        Grant g = lock.lock(WAIT);
        backend().deleteKey(g.key());
        lock.done().toCompletableFuture().get(10, SECONDS);
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> lock.unlockAsync().get(10, SECONDS));
        assertInstanceOf(LockLostException.class, e.getCause());
    }

    @Test
    void closeAsyncClosesOffTheCallersThread() throws Exception {
        String name = uniqueName("close-async");
        DiscoBackend.Owner owner = owner(10);
        LockService lock = owner.newLock(name);
        lock.lock(WAIT);
        CompletableFuture<Void> closed = lock.closeAsync();
        assertCompletesOffBackendThreads(closed);
        closed.get(10, SECONDS);
        lock.done().toCompletableFuture().get(10, SECONDS);
        assertKeys(name);
        assertFalse(owner.done().toCompletableFuture().isDone(), "a shared owner stays open");
    }
}
