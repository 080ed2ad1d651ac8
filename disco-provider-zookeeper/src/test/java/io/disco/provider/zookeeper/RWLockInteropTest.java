package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A disco read/write lock and Curator's {@code InterProcessReadWriteLock} on the same path: writers exclude
 * everybody, readers share, both ways, in one queue. (Curator's lock is re-entrant per thread, so each Curator
 * acquire and release runs on one single-threaded executor.)
 */
class RWLockInteropTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private final ExecutorService curatorThread = Executors.newSingleThreadExecutor();
    private DiscoBackend.Owner owner;

    @AfterEach
    void close() {
        curatorThread.shutdownNow();
        if (owner != null) {
            owner.close();
        }
    }

    private <T> T onCurator(Callable<T> call) throws Exception {
        return curatorThread.submit(call).get(15, SECONDS);
    }

    @Test
    void writersExcludeAndReadersShareAcrossDiscoAndCurator() throws Exception {
        String path = "/interop/rwlock/" + UUID.randomUUID();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        RWLockService disco = owner.newRWLock(path);
        InterProcessReadWriteLock curator = new InterProcessReadWriteLock(ZK.admin(), path);

        // A disco writer keeps Curator's reader and writer out.
        RWGrant w = disco.lock();
        assertFalse(
                onCurator(() -> curator.readLock().acquire(300, MILLISECONDS)),
                "a Curator reader got in past a disco writer");
        assertFalse(
                onCurator(() -> curator.writeLock().acquire(300, MILLISECONDS)),
                "a Curator writer got in past a disco writer");
        assertEquals(1, ZK.backend().keys(path).size(), "Curator's failed attempts left nodes");
        disco.unlock();

        // A Curator reader shares with a disco reader and keeps a disco writer out.
        assertTrue(onCurator(() -> curator.readLock().acquire(5, SECONDS)));
        RWGrant r = disco.rLock(Duration.ofSeconds(5));
        assertTrue(r.token().isNewerThan(w.token()));
        disco.rUnlock();
        assertThrows(TimeoutException.class, () -> disco.lock(Duration.ofMillis(300)));

        // A disco writer queued behind the Curator reader gets in once it leaves; then a Curator writer waits for it.
        CompletableFuture<RWGrant> waiting = disco.lockAsync();
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(path).size() == 2);
        assertFalse(waiting.isDone(), "a disco writer got in past a Curator reader");
        onCurator(() -> {
            curator.readLock().release();
            return null;
        });
        RWGrant w2 = waiting.get(5, SECONDS);
        assertTrue(w2.token().isNewerThan(r.token()));
        assertFalse(
                onCurator(() -> curator.writeLock().acquire(300, MILLISECONDS)),
                "a Curator writer got in past a disco writer");
        disco.unlock();
        assertTrue(onCurator(() -> curator.writeLock().acquire(5, SECONDS)));
        assertTrue(disco.tryRLock().isEmpty(), "a disco reader got in past a Curator writer");
        onCurator(() -> {
            curator.writeLock().release();
            return null;
        });
    }
}
