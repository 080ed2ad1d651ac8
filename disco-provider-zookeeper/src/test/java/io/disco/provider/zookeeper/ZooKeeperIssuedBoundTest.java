package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The guard's bound on ZooKeeper: the zxid of a write, above every token issued before it, so a guard built with it
 * takes a real owner's token and refuses one that nobody issued; a flood of forged tokens costs at most one such
 * write per read interval, counted on the server (the probe node's version).
 */
class ZooKeeperIssuedBoundTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Test
    void theBoundIsAboveEveryIssuedTokenAndAGuardRefusesAForgedOne() throws Exception {
        String path = "/bound/" + UUID.randomUUID();
        ZooKeeperIssuedBound bound = ZooKeeperIssuedBound.of(ZK.admin(), path + "/probe");
        try (DiscoBackend.Owner owner = ZK.backend().open(Duration.ofSeconds(10));
                LockService lock = owner.newLock(path + "/lock")) {
            Grant g = lock.lock(Duration.ofSeconds(5));
            FencingToken first =
                    bound.current().toCompletableFuture().get(5, TimeUnit.SECONDS); // creates the probe node
            assertTrue(first.isNewerThan(g.token()), g.token() + " then the bound " + first);
            FencingToken second = bound.current().toCompletableFuture().get(5, TimeUnit.SECONDS);
            assertTrue(second.isNewerThan(first), first + " then " + second);

            Guard guard = Guard.builder().issuedBound(bound).build();
            guard.check(g.token());
            assertEquals(g.token(), guard.highWater().orElseThrow());
            assertThrows(TokenNotIssuedException.class, () -> guard.check(FencingToken.of(Long.MAX_VALUE)));
            assertEquals(g.token(), guard.highWater().orElseThrow(), "the forged token left the mark alone");
            lock.unlock();
        }
    }

    /** The guard's default read interval ({@code Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS}). */
    private static final long INTERVAL_MS = 50;

    @Test
    void aFloodOfForgedTokensCostsAtMostOneWritePerIntervalAndARealNewOwnerStillGetsIn() throws Exception {
        String path = "/bound/" + UUID.randomUUID();
        String probe = path + "/probe";
        ZooKeeperIssuedBound bound = ZooKeeperIssuedBound.of(ZK.admin(), probe);
        try (DiscoBackend.Owner owner = ZK.backend().open(Duration.ofSeconds(10));
                LockService lock = owner.newLock(path + "/lock")) {
            Guard guard = Guard.builder().issuedBound(bound).build();
            FencingToken current = lock.lock(Duration.ofSeconds(5)).token();
            guard.admit(current).close(); // creates the probe node
            int versionBefore = ZK.admin().checkExists().forPath(probe).getVersion();

            int flooders = 50;
            AtomicBoolean stop = new AtomicBoolean();
            LongAdder refused = new LongAdder();
            ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
            CountDownLatch answered = new CountDownLatch(flooders);
            List<Thread> threads = new ArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < flooders; i++) {
                FencingToken forged = FencingToken.of(Long.MAX_VALUE - i);
                Thread t = new Thread(
                        () -> {
                            boolean first = true;
                            while (!stop.get()) {
                                try {
                                    guard.check(forged);
                                    unexpected.add(new AssertionError("forged " + forged + " admitted"));
                                } catch (TokenNotIssuedException e) {
                                    refused.increment();
                                } catch (Throwable e) {
                                    unexpected.add(e);
                                }
                                if (first) {
                                    first = false;
                                    answered.countDown();
                                }
                            }
                        },
                        "forger-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            List<Long> newOwnerMillis = new ArrayList<>();
            try {
                assertTrue(answered.await(30, TimeUnit.SECONDS));
                for (int i = 0; i < 3; i++) {
                    lock.unlock();
                    current = lock.lock(Duration.ofSeconds(5)).token();
                    long s = System.nanoTime();
                    guard.admit(current).close();
                    newOwnerMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s));
                }
                Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> System.nanoTime() - start >= TimeUnit.SECONDS.toNanos(1));
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
            }
            long elapsed = System.nanoTime() - start;
            int writes = ZK.admin().checkExists().forPath(probe).getVersion() - versionBefore;
            System.out.printf(
                    "[zk-bound-flood] %d forged requests in %.2f s: %d probe writes; new owners admitted in %s ms%n",
                    refused.sum(), elapsed / 1e9, writes, newOwnerMillis);
            assertEquals(List.of(), List.copyOf(unexpected));
            long most = (long) Math.ceil(elapsed / (double) TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS)) + 1;
            assertTrue(
                    writes <= most,
                    writes + " probe writes in " + elapsed / 1_000_000 + " ms: at most one per " + INTERVAL_MS
                            + " ms (+1), whatever the request rate (" + refused.sum() + " forged requests)");
            for (long ms : newOwnerMillis) {
                assertTrue(
                        ms <= INTERVAL_MS + 500,
                        "a real new owner admitted within the interval and one write: " + newOwnerMillis);
            }
            assertEquals(Optional.of(current), guard.highWater());
            lock.unlock();
        }
    }
}
