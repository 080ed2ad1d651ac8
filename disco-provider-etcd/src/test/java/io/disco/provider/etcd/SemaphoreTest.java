package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.Held;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fenced semaphore against a real etcd. */
class SemaphoreTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static List<String> slotKeys(String prefix) throws Exception {
        return Etcd.keysUnder(ETCD.client(), EtcdSemaphoreService.SLOT_NAMESPACE + prefix);
    }

    private static List<String> holderKeys(String prefix) throws Exception {
        return Etcd.keysUnder(ETCD.client(), prefix);
    }

    @Test
    void atMostLimitHoldersWithUniqueSlotsAndTokensRisingPerSlot() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-history");
        int limit = 3;
        Object monitor = new Object();
        Map<Integer, Long> inside = new HashMap<>(); // slot -> token of the holder inside; guarded by monitor
        Map<Integer, Long> lastToken = new HashMap<>();
        List<String> violations = new CopyOnWriteArrayList<>();
        int[] maxInside = {0};
        int[] entries = {0};
        ExecutorService pool = Executors.newFixedThreadPool(3 * limit);
        List<EtcdSession> sessions = new ArrayList<>();
        try {
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int w = 0; w < 3 * limit; w++) {
                EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                sessions.add(session);
                SemaphoreService sem = session.newSemaphore(prefix, limit);
                workers.add(CompletableFuture.runAsync(() -> {
                    for (int round = 0; round < 6; round++) {
                        try (Held<Permit> held = sem.acquireScoped(WAIT)) {
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
                            Thread.sleep(20); // the holder's work, long enough for holders to overlap
                            synchronized (monitor) {
                                inside.remove(p.slot());
                            }
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
            sessions.forEach(EtcdSession::close);
        }
        assertEquals(List.of(), violations);
        assertEquals(3 * limit * 6, entries[0]);
        assertTrue(maxInside[0] >= 2, "holders overlapped, up to " + maxInside[0]);
        assertTrue(holderKeys(prefix).isEmpty());
        assertTrue(slotKeys(prefix).isEmpty());
    }

    @Test
    void aZombieIsRejectedOnItsReassignedSlotAndAValidHolderNeverIs() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-zombie");
        KeyedGuard guards = KeyedGuard.create();
        try (EtcdSession sa = EtcdSession.open(ETCD.client(), Etcd.ttl(2));
             EtcdSession sb = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession sc = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             SemaphoreService a = sa.newSemaphore(prefix, 2);
             SemaphoreService b = sb.newSemaphore(prefix, 2);
             SemaphoreService c = sc.newSemaphore(prefix, 2)) {
            Permit pa = a.acquire(WAIT);
            Permit pb = b.acquire(WAIT);
            assertNotEquals(pa.slot(), pb.slot());
            guards.forKey(pa.guardKey()).check(pa.token());
            guards.forKey(pb.guardKey()).check(pb.token());
            assertFalse(c.tryAcquire().isPresent(), "both permits are taken");
            sa.orphan(); // A freezes past its TTL
            Permit pc = c.acquire(WAIT);
            assertEquals(pa.slot(), pc.slot(), "C takes the slot A's expired permit had");
            assertTrue(pc.token().isNewerThan(pa.token()));
            guards.forKey(pc.guardKey()).check(pc.token());
            assertThrows(TokenStaleException.class, () -> guards.forKey(pa.guardKey()).check(pa.token()), "zombie A");
            guards.forKey(pb.guardKey()).check(pb.token()); // B still holds: never rejected
            assertTrue(pb.token().value() < pc.token().value(), "B's token is lower than C's, on another slot");
            b.release();
            c.release();
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).isEmpty() && slotKeys(prefix).isEmpty());
    }

    @Test
    void aSlotWhoseHolderKeyIsGoneIsClaimedAgainWithAHigherTokenAndItsOldOwnerCannotFreeIt() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-stale-slot");
        try (EtcdSession sa = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession sb = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             SemaphoreService a = sa.newSemaphore(prefix, 1);
             SemaphoreService b = sb.newSemaphore(prefix, 1)) {
            Permit pa = a.acquire(WAIT);
            ETCD.client().getKVClient().delete(Etcd.bytes(pa.key())).get(10, TimeUnit.SECONDS); // an operator
            a.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(1, slotKeys(prefix).size(), "A's slot key is still there (its lease lives)");
            Permit pb = b.acquire(WAIT);
            assertEquals(pa.slot(), pb.slot());
            assertTrue(pb.token().isNewerThan(pa.token()));
            assertThrows(SemaphoreLostException.class, a::release);
            a.close();
            assertEquals(1, slotKeys(prefix).size(), "A's release and close leave B's claim alone");
            b.release();
            assertTrue(slotKeys(prefix).isEmpty());
        }
    }

    @Test
    void everyWayOfGivingUpLeavesNoKey() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-withdraw");
        try (EtcdSession sh = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession sw = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             SemaphoreService holder = sh.newSemaphore(prefix, 1);
             SemaphoreService waiter = sw.newSemaphore(prefix, 1)) {
            holder.acquire(WAIT);
            assertTrue(waiter.tryAcquire().isEmpty());
            assertThrows(TimeoutException.class, () -> waiter.acquire(Duration.ofMillis(300)));
            CompletableFuture<Permit> pending = waiter.acquireAsync();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 2);
            assertTrue(pending.cancel(true));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 1);
            Thread t = new Thread(() -> {
                try {
                    waiter.acquire();
                } catch (InterruptedException expected) {
                    // withdrawn
                }
            });
            t.start();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 2);
            t.interrupt();
            t.join(10_000);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 1);
            assertEquals(1, slotKeys(prefix).size(), "only the holder's slot");
            assertEquals(new SemaphoreService.Stat(1, 1), waiter.stat());
            holder.release();
            assertTrue(holderKeys(prefix).isEmpty());
            assertTrue(slotKeys(prefix).isEmpty());
            Permit p = waiter.acquire(WAIT);
            waiter.close();
            assertTrue(holderKeys(prefix).isEmpty() && slotKeys(prefix).isEmpty(), "close released " + p);
        }
    }

    /** A cancel landing at the instant of the grant (while the slot is being claimed) leaves no slot behind. */
    @Test
    void aCancelAtTheInstantOfTheGrantLeavesNoSlot() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-cancel-race");
        int cancelledFirst = 0;
        try (EtcdSession sh = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession sw = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             SemaphoreService holder = sh.newSemaphore(prefix, 1);
             SemaphoreService waiter = sw.newSemaphore(prefix, 1)) {
            for (int round = 0; round < 24; round++) {
                holder.acquire(WAIT);
                CompletableFuture<Permit> pending = waiter.acquireAsync();
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 2);
                CompletableFuture<Void> released = holder.releaseAsync();
                // The cancel lands 0 to 29 ms after the release: before, during and after the slot claim.
                java.util.concurrent.locks.LockSupport.parkNanos(round * 1_250_000L);
                if (pending.cancel(true)) {
                    cancelledFirst++;
                } else {
                    waiter.release(); // the grant won the race: it is a normal permit
                }
                released.get(10, TimeUnit.SECONDS);
                Awaitility.await().atMost(Duration.ofSeconds(10))
                        .until(() -> holderKeys(prefix).isEmpty() && slotKeys(prefix).isEmpty());
            }
        }
        System.out.println("semaphore cancel race: " + cancelledFirst + " of 24 cancels came first");
    }

    @Test
    void aWaiterWhoseLeaseDiesNeverReportsSuccess() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-waiter-lost");
        try (EtcdSession sh = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession sw = EtcdSession.open(ETCD.client(), Etcd.ttl(2));
             SemaphoreService holder = sh.newSemaphore(prefix, 1);
             SemaphoreService waiter = sw.newSemaphore(prefix, 1)) {
            holder.acquire(WAIT);
            CompletableFuture<Permit> waiting = waiter.acquireAsync();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 2);
            sw.orphan();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(15, TimeUnit.SECONDS));
            assertInstanceOf(SemaphoreLostException.class, e.getCause());
            holder.release();
        }
    }

    @Test
    void aKeyOfAnotherClientUnderThePrefixCountsAgainstTheLimit() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-go");
        long lease = ETCD.client().getLeaseClient().grant(30).get(10, TimeUnit.SECONDS).getID();
        // What a Go disco holder writes: <prefix>/<its lease id in hex>, leased.
        String goKey = prefix + "/" + Long.toHexString(lease);
        ETCD.client().getKVClient().put(Etcd.bytes(goKey), Etcd.bytes(""),
                PutOption.builder().withLeaseId(lease).build()).get(10, TimeUnit.SECONDS);
        try (EtcdSession s1 = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession s2 = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             SemaphoreService one = s1.newSemaphore(prefix, 2);
             SemaphoreService two = s2.newSemaphore(prefix, 2)) {
            one.acquire(WAIT);
            CompletableFuture<Permit> waiting = two.acquireAsync();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> holderKeys(prefix).size() == 3);
            assertFalse(waiting.isDone(), "the Go holder and one Java holder fill the limit of 2");
            ETCD.client().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            Permit p = waiting.get(10, TimeUnit.SECONDS);
            assertTrue(p.slot() == 0 || p.slot() == 1);
            assertEquals(2, slotKeys(prefix).size(), "no slot key lies under " + prefix + "/");
            assertTrue(holderKeys(prefix).stream().noneMatch(k -> k.contains("slot")));
        }
    }

    @Test
    void badInputAndADifferentLimitAreClearErrors() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-input");
        try (EtcdSession s = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             EtcdSession s2 = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> s.newSemaphore(prefix, 0));
            assertTrue(zero.getMessage().contains("limit must be at least 1"), zero.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.newSemaphore(null, 2));
            assertThrows(IllegalArgumentException.class, () -> s.newSemaphore("  ", 2));
            try (SemaphoreService first = s.newSemaphore(prefix, 2)) {
                assertEquals(2, first.limit());
                IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> s2.newSemaphore(prefix, 3));
                assertTrue(other.getMessage().contains("has limit 2") && other.getMessage().contains("asked for 3"),
                        other.getMessage());
                try (SemaphoreService same = s2.newSemaphore(prefix, 2)) {
                    assertEquals(new SemaphoreService.Stat(2, 0), same.stat());
                }
            }
        }
    }
}
