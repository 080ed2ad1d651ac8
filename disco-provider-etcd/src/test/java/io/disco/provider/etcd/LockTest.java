package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lock against one real etcd member: exclusion, zombies, giving up, loss, compaction, input, close. */
class LockTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    @Test
    void uncontendedLockUnlock() throws Exception {
        String prefix = uniquePrefix("basic");
        try (LockService lock = EtcdProvider.newLock(ETCD.client(), prefix, ttl(5))) {
            Grant g = lock.lock();
            assertEquals(List.of(g.key()), keysUnder(ETCD.client(), prefix));
            assertTrue(g.key().startsWith(prefix + "/"));
            assertEquals(g, lock.lock(), "lock() while holding returns the held grant");
            lock.unlock();
            assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
            Grant g2 = lock.lock();
            assertTrue(g2.token().isNewerThan(g.token()));
        }
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
    }

    @Test
    void mutualExclusionAndTokensIncreaseInCriticalSectionOrder() throws Exception {
        String prefix = uniquePrefix("mutex");
        int owners = 6;
        int rounds = 20;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Long> tokensInOrder = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(owners);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int o = 0; o < owners; o++) {
                futures.add(pool.submit(() -> {
                    try (LockService lock = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
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
                    }
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
            assertTrue(tokensInOrder.get(i) > tokensInOrder.get(i - 1),
                    "token " + tokensInOrder.get(i) + " at position " + i + " is not above its predecessor " + tokensInOrder.get(i - 1));
        }
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
    }

    @Test
    void zombieIsRejectedByTheGuard() throws Exception {
        String prefix = uniquePrefix("zombie");
        Guard guard = Guard.create();
        try (EtcdSession sessionA = EtcdSession.open(ETCD.client(), ttl(2));
             LockService b = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
            LockService a = sessionA.newLock(prefix);
            Grant ga = a.lock();
            guard.check(ga.token()); // A writes while it legitimately holds the lock

            sessionA.orphan(); // A freezes: no more keepalives
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
    }

    @Test
    void givingUpLeavesOnlyTheHoldersKey() throws Exception {
        String prefix = uniquePrefix("giveup");
        try (LockService holder = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10));
             LockService other = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
            Grant held = holder.lock();
            List<String> onlyHolder = List.of(held.key());

            assertTrue(other.tryLock().isEmpty(), "tryLock must be empty while held");
            assertEquals(onlyHolder, keysUnder(ETCD.client(), prefix));

            assertThrows(TimeoutException.class, () -> other.lock(Duration.ofMillis(500)));
            assertEquals(onlyHolder, keysUnder(ETCD.client(), prefix));

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
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            t.interrupt();
            assertInstanceOf(InterruptedException.class, interrupted.get(5, SECONDS));
            assertEquals(onlyHolder, keysUnder(ETCD.client(), prefix));

            CompletableFuture<Grant> async = other.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            assertTrue(async.cancel(true));
            assertThrows(CancellationException.class, async::join);
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).equals(onlyHolder));

            // After all that, the other owner still gets the lock once it is free.
            holder.unlock();
            Grant g = other.lock(Duration.ofSeconds(5));
            assertTrue(g.token().isNewerThan(held.token()));
        }
    }

    @Test
    void lockRightAfterACancelledOneIsNotUndoneByItsCleanup() throws Exception {
        String prefix = uniquePrefix("relock");
        try (LockService holder = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10));
             LockService other = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
            Grant held = holder.lock();
            for (int i = 0; i < 5; i++) {
                assertTrue(other.lockAsync().cancel(true));
                // Ask again at once, while the cancelled request's key may still be being withdrawn.
                CompletableFuture<Grant> again = other.lockAsync();
                await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(5))
                        .until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
                assertFalse(again.isDone(), "must not acquire while the holder holds the lock");
                assertTrue(again.cancel(true));
                await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(5))
                        .until(() -> keysUnder(ETCD.client(), prefix).equals(List.of(held.key())));
            }
            assertTrue(other.lockAsync().cancel(true));
            CompletableFuture<Grant> last = other.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            holder.unlock();
            Grant g = last.get(5, SECONDS);
            assertEquals(List.of(g.key()), keysUnder(ETCD.client(), prefix), "the new request's key must survive the old one's cleanup");
            assertTrue(other.tryLock().isPresent());
        }
    }

    @Test
    void waiterWhoseLeaseIsRevokedFailsPromptlyAndLeavesNoKey() throws Exception {
        String prefix = uniquePrefix("revoked");
        try (LockService holder = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10));
             EtcdSession waiterSession = EtcdSession.open(ETCD.client(), ttl(30))) {
            Grant held = holder.lock();
            LockService waiter = waiterSession.newLock(prefix);
            CompletableFuture<Grant> waiting = waiter.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);

            ETCD.client().getLeaseClient().revoke(waiterSession.leaseId()).get(5, SECONDS);

            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
            assertInstanceOf(LockLostException.class, e.getCause());
            assertEquals(List.of(held.key()), keysUnder(ETCD.client(), prefix));
            waiter.done().toCompletableFuture().get(5, SECONDS);
            assertTrue(waiter.err().isPresent());
            holder.unlock();
            assertTrue(waiter.held().isEmpty(), "the revoked waiter must never report the lock as acquired");
        }
    }

    @Test
    void compactionWhileWaitingIsNotAFailure() throws Exception {
        String prefix = uniquePrefix("compact");
        try (LockService holder = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10));
             LockService waiter = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
            Grant held = holder.lock();
            CompletableFuture<Grant> waiting = waiter.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            for (int i = 0; i < 5; i++) {
                ETCD.client().getKVClient().put(Etcd.bytes(prefix + "-noise"), Etcd.bytes("v" + i)).get(5, SECONDS);
            }
            ETCD.client().getKVClient().compact(Etcd.revision(ETCD.client())).get(5, SECONDS);
            assertFalse(waiting.isDone());
            holder.unlock();
            Grant g = waiting.get(5, SECONDS);
            assertTrue(g.token().isNewerThan(held.token()));
        }
    }

    @Test
    void badInputFailsAtOnceNamingTheProblem() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newLock(ETCD.client(), null));
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newLock(ETCD.client(), "  "));
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdOptions.builder().ttl(Duration.ofMillis(500)));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdOptions.builder().ttl(Duration.ofMillis(1500)));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdOptions.builder().requestTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("requestTimeout"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdOptions.builder().ttl(null));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdSession.open(null));
        assertTrue(e.getMessage().contains("client"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdSession.open(ETCD.client(), null));
        assertTrue(e.getMessage().contains("options"), e.getMessage());

        String prefix = uniquePrefix("input");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(5))) {
            LockService first = session.newLock(prefix);
            IllegalStateException dup = assertThrows(IllegalStateException.class, () -> session.newLock(prefix));
            assertTrue(dup.getMessage().contains(prefix), dup.getMessage());
            assertThrows(IllegalArgumentException.class, () -> first.lock(Duration.ZERO));
            first.close();
            session.newLock(prefix).close(); // the prefix is free again once its service closed
        }
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
    }

    @Test
    void closeRevokesAnOwnSessionAndNeverClosesTheClient() throws Exception {
        String prefix = uniquePrefix("close");
        LockService a = EtcdProvider.newLock(ETCD.client(), prefix, ttl(30));
        Grant ga = a.lock();
        try (LockService b = EtcdProvider.newLock(ETCD.client(), prefix, ttl(30))) {
            CompletableFuture<Grant> waiting = b.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            a.close();
            // Far sooner than A's 30 s TTL: close() revoked the lease.
            Grant gb = waiting.get(3, SECONDS);
            assertTrue(gb.token().isNewerThan(ga.token()));
            a.done().toCompletableFuture().get(1, SECONDS);
            assertTrue(a.err().isEmpty(), "a plain close is not a loss");
            assertThrows(IllegalStateException.class, a::tryLock);
        }
        // The caller's ETCD.client() still works.
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
    }

    @Test
    void everyServiceOfASharedSessionSeesTheLoss() throws Exception {
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(30))) {
            LockService one = session.newLock(uniquePrefix("shared"));
            LockService two = session.newLock(uniquePrefix("shared"));
            one.lock();
            ETCD.client().getLeaseClient().revoke(session.leaseId()).get(5, SECONDS);
            session.probeLease();
            one.done().toCompletableFuture().get(5, SECONDS);
            two.done().toCompletableFuture().get(5, SECONDS);
            session.done().toCompletableFuture().get(5, SECONDS);
            assertTrue(one.err().isPresent());
            assertTrue(two.err().isPresent());
            assertTrue(session.err().isPresent());
        }
    }

    @Test
    void sharedSessionServiceCloseReleasesButKeepsTheSession() throws Exception {
        String prefix = uniquePrefix("shared-close");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(30));
             LockService other = EtcdProvider.newLock(ETCD.client(), prefix, ttl(10))) {
            LockService lock = session.newLock(prefix);
            FencingToken first = lock.lock().token();
            lock.close();
            assertTrue(other.tryLock().isPresent(), "close() released the lock");
            assertFalse(session.done().toCompletableFuture().isDone(), "the shared session stays open");
            assertTrue(other.held().orElseThrow().token().isNewerThan(first));
        }
    }
}
