package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A disco semaphore and Curator's {@code InterProcessSemaphoreV2} of the same limit on the same path share its
 * {@code leases} directory and never admit more holders together than the limit, both ways, without disco
 * taking the recipe's internal mutex {@code <path>/locks} (see docs/zookeeper.md: both admit a node only when at
 * most {@code limit} nodes are at or before it).
 */
class SemaphoreInteropTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private static final int LIMIT = 2;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void closeAll() throws Exception {
        pool.shutdownNow();
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private SemaphoreService disco(String path) {
        CuratorFramework c = ZkContractBackend.client(ZK.connectString(), 10_000);
        open.add(c);
        ZooKeeperSession s = ZooKeeperSession.open(c, ZkContractBackend.options());
        open.add(s);
        return s.newSemaphore(path, LIMIT);
    }

    private InterProcessSemaphoreV2 curator(String path) {
        CuratorFramework c = ZkContractBackend.client(ZK.connectString(), 10_000);
        open.add(c);
        return new InterProcessSemaphoreV2(c, path, LIMIT);
    }

    private static String path() {
        return "/interop/semaphore/" + UUID.randomUUID();
    }

    @Test
    void twoDiscoHoldersKeepCuratorOutAndHandOnToIt() throws Exception {
        String path = path();
        SemaphoreService a = disco(path);
        SemaphoreService b = disco(path);
        InterProcessSemaphoreV2 curator = curator(path);
        a.acquire(Duration.ofSeconds(5));
        b.acquire(Duration.ofSeconds(5));
        assertNull(curator.acquire(300, TimeUnit.MILLISECONDS), "Curator got a third lease of " + LIMIT);

        Future<Lease> waiting = pool.submit(() -> curator.acquire(10, TimeUnit.SECONDS));
        a.release();
        Lease lease = waiting.get(15, TimeUnit.SECONDS);
        assertNotNull(lease, "Curator got the permit disco released");
        curator.returnLease(lease);
        b.release();
    }

    @Test
    void twoCuratorLeasesKeepDiscoOutAndHandOnToIt() throws Exception {
        String path = path();
        SemaphoreService disco = disco(path);
        InterProcessSemaphoreV2 a = curator(path);
        InterProcessSemaphoreV2 b = curator(path);
        Lease la = a.acquire(5, TimeUnit.SECONDS);
        Lease lb = b.acquire(5, TimeUnit.SECONDS);
        assertNotNull(la);
        assertNotNull(lb);
        assertThrows(
                TimeoutException.class,
                () -> disco.acquire(Duration.ofMillis(300)),
                "disco got a third permit of " + LIMIT);
        assertTrue(disco.tryAcquire().isEmpty());

        CompletableFuture<Permit> waiting = disco.acquireAsync();
        a.returnLease(la);
        Permit p = waiting.get(15, TimeUnit.SECONDS);
        assertEquals(path, p.name());
        disco.release();
        b.returnLease(lb);
    }

    @Test
    void mixedHoldersNeverExceedTheLimitAndReachIt() throws Exception {
        String path = path();
        Holders holders = new Holders();
        int rounds = 10;
        List<Future<?>> runs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            SemaphoreService d = disco(path);
            runs.add(pool.submit(() -> {
                for (int r = 0; r < rounds; r++) {
                    d.acquire(Duration.ofSeconds(20));
                    holders.hold();
                    d.release();
                }
                return null;
            }));
            InterProcessSemaphoreV2 c = curator(path);
            runs.add(pool.submit(() -> {
                for (int r = 0; r < rounds; r++) {
                    Lease l = c.acquire(20, TimeUnit.SECONDS);
                    assertNotNull(l, "Curator waited 20 s for a lease");
                    holders.hold();
                    c.returnLease(l);
                }
                return null;
            }));
        }
        for (Future<?> f : runs) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertEquals(LIMIT, holders.most, "at most " + LIMIT + " holders at once, and " + LIMIT + " seen together");
        assertEquals(List.of(), ZK.backend().keys(path + "/leases"), "every lease node is gone");
    }

    /**
     * Counts the holders in this process: a holder stays until another holds beside it (at most 100 ms), so the
     * test shows the limit reached, not only never exceeded.
     */
    private static final class Holders {
        private int holding;
        int most;

        synchronized void hold() throws InterruptedException {
            holding++;
            most = Math.max(most, holding);
            notifyAll();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            while (holding < LIMIT && System.nanoTime() < until) {
                TimeUnit.NANOSECONDS.timedWait(this, until - System.nanoTime());
            }
            holding--;
        }
    }
}
