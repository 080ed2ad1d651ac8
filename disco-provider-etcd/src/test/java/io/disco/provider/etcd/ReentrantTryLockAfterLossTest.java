package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.FencedLocks;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reentrant {@code tryLock} confirms the hold (issue 32): Spring Integration's
 * {@code LockRegistryLeaderInitiator} re-acquires its lock every heartbeat and takes a false as the end
 * of its leadership, so after the lease is lost the holder's reentrant tryLock must say false and leave
 * its hold count alone; before the loss it nests as always.
 */
class ReentrantTryLockAfterLossTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static void revokeTheLeaseOf(Client client, String name) throws Exception {
        String key = keysUnder(client, name).get(0);
        ETCD.cluster().etcdctl("lease", "revoke", key.substring(name.length() + 1));
    }

    private static void assertReentrantTryLockConfirms(FencedLock lock, Runnable loseIt) throws Exception {
        lock.lock();
        assertTrue(lock.tryLock(), "valid hold: nests");
        assertTrue(lock.tryLock(100, TimeUnit.MILLISECONDS), "valid hold: nests");
        assertEquals(3, lock.getHoldCount());
        lock.unlock();
        lock.unlock();

        loseIt.run();
        lock.done().toCompletableFuture().get(5, TimeUnit.SECONDS);

        assertFalse(lock.tryLock(), "lost hold: a reentrant tryLock() says so");
        assertFalse(lock.tryLock(100, TimeUnit.MILLISECONDS), "lost hold: a reentrant tryLock(time) says so");
        assertEquals(1, lock.getHoldCount(), "the failed attempts took nothing");
        assertTrue(lock.isHeldByCurrentThread());
        assertThrows(LockLostException.class, lock::unlock, "the last unlock tells the loss");
        assertFalse(lock.isHeldByCurrentThread());
    }

    @Test
    void theClientsLock() throws Exception {
        String name = uniquePrefix("reentrant-try-client");
        try (Client client = Etcd.client(ETCD.cluster());
                Disco disco = EtcdProvider.disco(client, Etcd.ttl(10))) {
            assertReentrantTryLockConfirms(disco.lock(name), () -> {
                try {
                    revokeTheLeaseOf(client, name);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            FencedLock again = disco.lock(name);
            assertTrue(again.tryLock(5, TimeUnit.SECONDS), "the client heals: the name is acquired again");
            again.unlock();
        }
    }

    @Test
    void aViewOfOneService() throws Exception {
        String name = uniquePrefix("reentrant-try-view");
        try (Client client = Etcd.client(ETCD.cluster());
                LockService service = EtcdProvider.newLock(client, name, Etcd.ttl(10))) {
            assertReentrantTryLockConfirms(FencedLocks.of(service), () -> {
                try {
                    revokeTheLeaseOf(client, name);
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
    }
}
