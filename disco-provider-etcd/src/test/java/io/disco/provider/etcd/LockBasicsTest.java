package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testing.EtcdExtension;
import io.etcd.jetcd.Client;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LockBasicsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    static Client client;

    @BeforeAll
    static void connect() {
        client = Etcd.client(ETCD.cluster());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @Test
    void uncontendedLockUnlock() throws Exception {
        String prefix = uniquePrefix("basic");
        try (LockService lock = EtcdProvider.newLock(client, prefix, ttl(5))) {
            Grant g = lock.lock();
            assertEquals(List.of(g.key()), keysUnder(client, prefix));
            assertTrue(g.key().startsWith(prefix + "/"));
            assertEquals(g, lock.lock(), "lock() while holding returns the held grant");
            lock.unlock();
            assertEquals(List.of(), keysUnder(client, prefix));
            Grant g2 = lock.lock();
            assertTrue(g2.token().isNewerThan(g.token()));
        }
        assertEquals(List.of(), keysUnder(client, prefix));
    }
}
