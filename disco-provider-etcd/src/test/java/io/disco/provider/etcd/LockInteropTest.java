package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code etcdctl lock} (etcd's own Go Mutex) and this library exclude each other on the same name. */
class LockInteropTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    @Test
    void etcdctlHoldsJavaWaits() throws Exception {
        String name = uniquePrefix("interop-ctl-first");
        try (Etcdctl ctl = Etcdctl.start(ETCD.cluster().endpoint(0), "lock", name);
                LockService java = EtcdProvider.newLock(ETCD.client(), name, ttl(10))) {
            String key = ctl.nextLine(10_000); // etcdctl prints its key once it holds the lock
            assertNotNull(key, "etcdctl did not acquire the lock");
            assertTrue(key.startsWith(name + "/"), key);

            assertTrue(java.tryLock().isEmpty(), "Java must not get a lock that etcdctl holds");
            CompletableFuture<Grant> waiting = java.lockAsync();
            ctl.interrupt(); // etcdctl releases (revokes its session) on Ctrl-C
            Grant g = waiting.get(10, SECONDS);
            assertTrue(g.key().startsWith(name + "/"));
        }
    }

    @Test
    void javaHoldsEtcdctlWaits() throws Exception {
        String name = uniquePrefix("interop-java-first");
        try (LockService java = EtcdProvider.newLock(ETCD.client(), name, ttl(10))) {
            Grant g = java.lock();
            try (Etcdctl ctl = Etcdctl.start(ETCD.cluster().endpoint(0), "lock", name, "echo", "ETCDCTL-ACQUIRED")) {
                // etcdctl registers behind Java and must not get in while Java holds the lock.
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> keysUnder(ETCD.client(), name).size() == 2);
                assertNull(ctl.nextLine(500), "etcdctl ran its command while Java held the lock");
                assertTrue(ctl.isAlive());

                java.unlock();
                assertEquals("ETCDCTL-ACQUIRED", ctl.nextLine(10_000));
                assertEquals(0, ctl.waitFor(10));
            }
            assertTrue(g.key().startsWith(name + "/"));
        }
    }
}
