package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A disco lock and Curator's own {@code InterProcessMutex} on the same path exclude each other, both ways, and
 * hand the lock on to each other in queue order. A Curator holder sends no token: the disco holder after it
 * still gets a token above every earlier disco token (czxids grow with every node).
 */
class LockInteropTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private final ExecutorService pool = Executors.newCachedThreadPool();
    private DiscoBackend.Owner owner;

    @AfterEach
    void close() {
        pool.shutdownNow();
        if (owner != null) {
            owner.close();
        }
    }

    private static String path() {
        return "/interop/lock/" + UUID.randomUUID();
    }

    @Test
    void aDiscoHolderKeepsInterProcessMutexOutAndHandsOnToIt() throws Exception {
        String path = path();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        LockService disco = owner.newLock(path);
        InterProcessMutex curator = new InterProcessMutex(ZK.admin(), path);

        Grant g = disco.lock();
        assertFalse(
                curator.acquire(300, java.util.concurrent.TimeUnit.MILLISECONDS),
                "Curator got in while disco held the lock");
        assertEquals(List.of(g.key()), ZK.backend().keys(path), "Curator's failed attempt left its node");

        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return curator.acquire(10, SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                pool);
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(path).size() == 2);
        assertFalse(waiting.isDone());
        disco.unlock();
        assertTrue(waiting.get(5, SECONDS), "Curator got the lock after disco released it");
        assertTrue(disco.tryLock().isEmpty(), "disco got in while Curator held the lock");
        pool.submit(() -> {
                    curator.release();
                    return null;
                })
                .get(5, SECONDS); // InterProcessMutex is re-entrant per thread: released by the thread that took it
    }

    @Test
    void anInterProcessMutexHolderKeepsDiscoOutAndHandsOnToIt() throws Exception {
        String path = path();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        LockService disco = owner.newLock(path);
        InterProcessMutex curator = new InterProcessMutex(ZK.admin(), path);

        Grant first = disco.lock();
        disco.unlock();
        curator.acquire();
        assertThrows(TimeoutException.class, () -> disco.lock(Duration.ofMillis(300)));
        assertEquals(1, ZK.backend().keys(path).size(), "disco's withdrawn claim left its node");

        CompletableFuture<Grant> waiting = disco.lockAsync();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(path).size() == 2);
        assertFalse(waiting.isDone(), "disco got in while Curator held the lock");
        curator.release();
        Grant g = waiting.get(5, SECONDS);
        assertTrue(g.token().isNewerThan(first.token()), "tokens keep growing across a Curator holder");
        assertFalse(
                curator.acquire(300, java.util.concurrent.TimeUnit.MILLISECONDS),
                "Curator got in while disco held the lock");
        disco.unlock();
        assertTrue(curator.acquire(5, SECONDS));
        curator.release();
    }
}
