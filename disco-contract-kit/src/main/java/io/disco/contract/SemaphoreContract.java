package io.disco.contract;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.fencing.Held;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The {@link SemaphoreService} contract: at most {@code limit} holders, each on its own slot with a token that
 * grows per slot, a zombie rejected on its reassigned slot while a valid holder never is, every way of giving up
 * leaving no key (a cancel at the instant of the grant included), a waiter whose lease ends never winning, bad
 * input. Extend it with a {@link #backend()}.
 */
public abstract class SemaphoreContract extends ContractSupport {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void atMostLimitHoldersWithUniqueSlotsAndTokensRisingPerSlot() throws Exception {
        String name = uniqueName("semaphore-history");
        int limit = 3;
        Object monitor = new Object();
        Map<Integer, Long> inside = new HashMap<>(); // slot -> token of the holder inside; guarded by monitor
        Map<Integer, Long> lastToken = new HashMap<>();
        List<String> violations = new CopyOnWriteArrayList<>();
        int[] maxInside = {0};
        int[] entries = {0};
        CountDownLatch full = new CountDownLatch(limit); // the first `limit` holders wait for each other
        ExecutorService pool = Executors.newFixedThreadPool(3 * limit);
        try {
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int w = 0; w < 3 * limit; w++) {
                SemaphoreService sem = owner(10).newSemaphore(name, limit);
                workers.add(CompletableFuture.runAsync(
                        () -> {
                            for (int round = 0; round < 6; round++) {
                                try (Held<Permit> held = sem.hold(WAIT)) {
                                    Permit p = held.grant();
                                    synchronized (monitor) {
                                        if (p.slot() < 0 || p.slot() >= limit) {
                                            violations.add("slot out of range: " + p);
                                        }
                                        if (inside.containsKey(p.slot())) {
                                            violations.add(p + " shares its slot with token " + inside.get(p.slot()));
                                        }
                                        Long last = lastToken.get(p.slot());
                                        if (last != null && last >= p.token().value()) {
                                            violations.add(p + " not above the slot's previous token " + last);
                                        }
                                        inside.put(p.slot(), p.token().value());
                                        lastToken.put(p.slot(), p.token().value());
                                        maxInside[0] = Math.max(maxInside[0], inside.size());
                                        entries[0]++;
                                        if (inside.size() > limit) {
                                            violations.add(inside.size() + " holders inside: " + inside);
                                        }
                                    }
                                    full.countDown(); // holders overlap because they wait for each other, not by chance
                                    if (!full.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                                        violations.add("the first " + limit + " holders never held at once");
                                    }
                                    synchronized (monitor) {
                                        inside.remove(p.slot());
                                    }
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            }
                        },
                        pool));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(100, SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(List.of(), violations);
        assertEquals(3 * limit * 6, entries[0]);
        assertEquals(limit, maxInside[0], "the limit's worth of holders held at once");
        assertKeys(name);
    }

    @Test
    void aZombieIsRejectedOnItsReassignedSlotAndAValidHolderNeverIs() throws Exception {
        String name = uniqueName("semaphore-zombie");
        KeyedGuard guards = KeyedGuard.create();
        DiscoBackend.Owner ownerA = owner(2);
        SemaphoreService a = ownerA.newSemaphore(name, 2);
        SemaphoreService b = owner(10).newSemaphore(name, 2);
        SemaphoreService c = owner(10).newSemaphore(name, 2);
        Permit pa = a.acquire(WAIT);
        Permit pb = b.acquire(WAIT);
        assertNotEquals(pa.slot(), pb.slot());
        guards.forKey(pa.guardKey()).check(pa.token());
        guards.forKey(pb.guardKey()).check(pb.token());
        assertFalse(c.tryAcquire().isPresent(), "both permits are taken");
        backend().freeze(ownerA); // A freezes past its TTL
        Permit pc = c.acquire(WAIT);
        assertEquals(pa.slot(), pc.slot(), "C takes the slot A's expired permit had");
        assertTrue(pc.token().isNewerThan(pa.token()));
        guards.forKey(pc.guardKey()).check(pc.token());
        assertThrows(
                TokenStaleException.class, () -> guards.forKey(pa.guardKey()).check(pa.token()), "zombie A");
        guards.forKey(pb.guardKey()).check(pb.token()); // B still holds: never rejected
        assertTrue(pb.token().value() < pc.token().value(), "B's token is lower than C's, on another slot");
        b.release();
        c.release();
        await().atMost(Duration.ofSeconds(10)).until(() -> keys(name).isEmpty());
    }

    @Test
    void everyWayOfGivingUpLeavesNoKey() throws Exception {
        String name = uniqueName("semaphore-withdraw");
        SemaphoreService holder = owner(10).newSemaphore(name, 1);
        SemaphoreService waiter = owner(10).newSemaphore(name, 1);
        holder.acquire(WAIT);
        List<String> holders = keys(name);
        assertTrue(waiter.tryAcquire().isEmpty());
        assertEquals(holders, keys(name));
        assertThrows(TimeoutException.class, () -> waiter.acquire(Duration.ofMillis(300)));
        assertEquals(holders, keys(name));
        CompletableFuture<Permit> pending = waiter.acquireAsync();
        awaitNewKey(name, holders);
        assertTrue(pending.cancel(true));
        awaitKeys(name, holders);
        CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                waiter.acquire();
                interrupted.complete(null);
            } catch (Throwable e) {
                interrupted.complete(e);
            }
        });
        t.start();
        awaitNewKey(name, holders);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, interrupted.get(10, SECONDS));
        awaitKeys(name, holders); // only the holder's keys (its slot among them)
        assertEquals(new SemaphoreService.Stat(1, 1), waiter.stat());
        holder.release();
        assertKeys(name);
        Permit p = waiter.acquire(WAIT);
        waiter.close();
        assertTrue(keys(name).isEmpty(), "close released " + p);
    }

    /** A cancel landing at the instant of the grant (while the slot is being claimed) leaves no slot behind. */
    @Test
    void aCancelAtTheInstantOfTheGrantLeavesNoSlot() throws Exception {
        String name = uniqueName("semaphore-cancel-race");
        int cancelledFirst = 0;
        SemaphoreService holder = owner(10).newSemaphore(name, 1);
        SemaphoreService waiter = owner(10).newSemaphore(name, 1);
        for (int round = 0; round < 24; round++) {
            holder.acquire(WAIT);
            List<String> holders = keys(name);
            CompletableFuture<Permit> pending = waiter.acquireAsync();
            awaitNewKey(name, holders);
            CompletableFuture<Void> released = holder.releaseAsync();
            // The cancel lands 0 to 29 ms after the release: before, during and after the slot claim.
            LockSupport.parkNanos(round * 1_250_000L);
            if (pending.cancel(true)) {
                cancelledFirst++;
            } else {
                waiter.release(); // the grant won the race: it is a normal permit
            }
            released.get(10, SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> keys(name).isEmpty());
        }
        System.out.println("semaphore cancel race: " + cancelledFirst + " of 24 cancels came first");
    }

    /** A holder of a semaphore of one permit, and a waiter queued behind it, with the keys before it queued. */
    private record Queued(
            SemaphoreService holder,
            SemaphoreService waiter,
            List<String> holders,
            CompletableFuture<Permit> waiting) {}

    /** @return a holder (on an owner of its own) of {@code name}'s one permit and a waiter on {@code waiterOwner} */
    private Queued queuedBehindAHolder(String name, DiscoBackend.Owner waiterOwner) throws Exception {
        SemaphoreService holder = owner(10).newSemaphore(name, 1);
        SemaphoreService waiter = waiterOwner.newSemaphore(name, 1);
        holder.acquire(WAIT);
        List<String> holders = keys(name);
        CompletableFuture<Permit> waiting = waiter.acquireAsync();
        awaitNewKey(name, holders);
        return new Queued(holder, waiter, holders, waiting);
    }

    @Test
    void aWaiterWhoseLeaseDiesNeverReportsSuccess() throws Exception {
        String name = uniqueName("semaphore-waiter-lost");
        DiscoBackend.Owner waiterOwner = owner(2);
        Queued q = queuedBehindAHolder(name, waiterOwner);
        backend().freeze(waiterOwner);
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> q.waiting().get(15, SECONDS));
        assertInstanceOf(SemaphoreLostException.class, e.getCause());
        assertTrue(q.waiter().held().isEmpty(), "the lost waiter must never report a permit");
        q.holder().release();
    }

    @Test
    void aWaiterWhoseLeaseIsRevokedFailsAndLeavesNoKey() throws Exception {
        String name = uniqueName("semaphore-revoked");
        DiscoBackend.Owner waiterOwner = owner(30);
        Queued q = queuedBehindAHolder(name, waiterOwner);
        backend().endOwner(waiterOwner);
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> q.waiting().get(3, SECONDS));
        assertInstanceOf(SemaphoreLostException.class, e.getCause());
        assertEquals(q.holders(), keys(name));
        q.waiter().done().toCompletableFuture().get(5, SECONDS);
        assertTrue(q.waiter().err().isPresent());
        q.holder().release();
        assertTrue(q.waiter().held().isEmpty(), "the revoked waiter must never report a permit");
    }

    @Test
    void badInputAndADifferentLimitAreClearErrors() throws Exception {
        String name = uniqueName("semaphore-input");
        DiscoBackend.Owner s = owner(10);
        DiscoBackend.Owner s2 = owner(10);
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> s.newSemaphore(name, 0));
        assertTrue(zero.getMessage().contains("limit"), zero.getMessage());
        assertThrows(NullPointerException.class, () -> s.newSemaphore(null, 2));
        assertThrows(IllegalArgumentException.class, () -> s.newSemaphore("  ", 2));
        try (SemaphoreService first = s.newSemaphore(name, 2)) {
            assertEquals(2, first.limit());
            IllegalArgumentException other =
                    assertThrows(IllegalArgumentException.class, () -> s2.newSemaphore(name, 3));
            assertTrue(
                    other.getMessage().contains("limit")
                            && other.getMessage().contains("2")
                            && other.getMessage().contains("3"),
                    other.getMessage());
            try (SemaphoreService same = s2.newSemaphore(name, 2)) {
                assertEquals(new SemaphoreService.Stat(2, 0), same.stat());
            }
        }
    }
}
