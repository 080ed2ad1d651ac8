package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A release that ZooKeeper refuses for good (the delete's permission was taken away: NOAUTH) applies nothing, so the
 * grant is held again: the release throws a failure that is not a loss, {@code held()} still has the grant, and once
 * the permission is back the release succeeds. Before, the service moved its grant from IDLE to HELD, a move its
 * state refused (an {@code IllegalStateException} in ZooKeeper's callback), and the release never ended.
 */
class ReleaseRefusedTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Test
    void aReleaseRefusedForGoodLeavesTheGrantHeld() throws Exception {
        String name = "/release-refused/lock-" + UUID.randomUUID();
        try (CuratorFramework client = ZkContractBackend.client(ZK.connectString(), 30_000);
                ZooKeeperSession session = ZooKeeperSession.open(
                        client,
                        ZooKeeperOptions.builder()
                                .requestTimeout(Duration.ofSeconds(2))
                                .build())) {
            LockService lock = session.newLock(name);
            Grant g = lock.lock(Duration.ofSeconds(10));
            List<ACL> open = client.getACL().forPath(name);
            client.setACL()
                    .withACL(List.of(new ACL(ZooDefs.Perms.ALL & ~ZooDefs.Perms.DELETE, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                    .forPath(name);
            try {
                DiscoException refused = assertThrows(DiscoException.class, lock::unlock);
                assertFalse(refused instanceof LockLostException, "a refused delete is no loss: " + refused);
                assertTrue(refused.getMessage().contains("still holds"), refused.getMessage());
                assertEquals(g, lock.held().orElseThrow(() -> new AssertionError("the grant is held again")));
                assertTrue(lock.err().isEmpty(), "not lost: " + lock.err());
            } finally {
                client.setACL().withACL(open).forPath(name);
            }
            lock.unlock();
            assertTrue(lock.held().isEmpty(), "released once the permission is back");
        }
    }
}
