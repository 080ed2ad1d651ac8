package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** An unreachable ensemble fails in time with its connect string; bad arguments fail at once, naming themselves. */
class OutageAndInputTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Test
    void anUnreachableEnsembleFailsWithATimeoutNamingTheConnectString() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // free once closed: nobody listens there
        }
        String where = "127.0.0.1:" + port;
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(where, 5_000, 1_000, new RetryOneTime(100))) {
            client.start();
            ZooKeeperOptions options = ZooKeeperOptions.builder()
                    .connectTimeout(Duration.ofSeconds(1))
                    .build();
            DiscoException e = assertTimeoutPreemptively(
                    Duration.ofSeconds(10),
                    () -> assertThrows(DiscoException.class, () -> ZooKeeperSession.open(client, options)));
            assertTrue(e.getMessage().contains(where), e.getMessage());
        }
    }

    @Test
    void badArgumentsFailAtOnceNamingTheParameter() throws Exception {
        assertEquals(
                "client",
                assertThrows(NullPointerException.class, () -> ZooKeeperSession.open(null, ZooKeeperOptions.defaults()))
                        .getMessage());
        assertEquals(
                "options",
                assertThrows(NullPointerException.class, () -> ZooKeeperSession.open(ZK.admin(), null))
                        .getMessage());
        try (CuratorFramework notStarted =
                CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100))) {
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, () -> ZooKeeperSession.open(notStarted));
            assertTrue(e.getMessage().contains("start"), e.getMessage());
        }
        assertThrows(
                IllegalArgumentException.class, () -> ZooKeeperOptions.builder().connectTimeout(Duration.ZERO));
        assertThrows(
                IllegalArgumentException.class, () -> ZooKeeperOptions.builder().requestTimeout(Duration.ofMillis(-1)));
        assertEquals(
                "requestTimeout",
                assertThrows(
                                NullPointerException.class,
                                () -> ZooKeeperOptions.builder().requestTimeout(null))
                        .getMessage());

        try (ZooKeeperSession session = ZooKeeperSession.open(ZK.admin())) {
            assertEquals(
                    "name",
                    assertThrows(NullPointerException.class, () -> session.newLock(null))
                            .getMessage());
            assertThrows(IllegalArgumentException.class, () -> session.newLock(" "));
            assertThrows(IllegalArgumentException.class, () -> session.newLock("relative/path"));
            assertThrows(IllegalArgumentException.class, () -> session.newLock("/trailing/"));
            assertEquals(java.util.List.of(), ZK.backend().keys("/relative"), "nothing was created");
        }
    }
}
