package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.testservers.ZooKeeperExtension;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code CuratorFramework} closed before the {@link ZooKeeperSession} that runs on it (issue 45, item 5): the
 * session is lost at once with that reason, not after its deadline as if ZooKeeper were silent; a new service on it
 * is an {@link IllegalStateException} saying so; a lock held on it reports the loss. And a session that cannot be
 * opened says why (item 6): a refused port, an unknown host, each naming the connect string.
 */
class ZkClientClosedFirstTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    @Test
    void theCuratorFrameworkClosedFirst() throws Exception {
        CuratorFramework client = ZkContractBackend.client(ZK.connectString(), 30_000);
        ZooKeeperSession session = ZooKeeperSession.open(client, ZkContractBackend.options());
        try {
            LockService lock = session.newLock("/closed-first/" + UUID.randomUUID());
            lock.lock(Duration.ofSeconds(5));
            client.close();
            long closed = System.nanoTime();
            assertTrue(session.err().isPresent(), "lost at once");
            String why = session.err().get().getMessage();
            assertTrue(why.contains("closed before"), why);
            IllegalStateException refused =
                    assertThrows(IllegalStateException.class, () -> session.newLock("/closed-first/other"));
            assertTrue(refused.getMessage().contains("closed before"), refused.getMessage());
            lock.done().toCompletableFuture().get(2, TimeUnit.SECONDS);
            assertInstanceOf(LockLostException.class, lock.err().orElseThrow());
            assertEquals(java.time.Duration.ZERO, session.remainingValidity());
            assertTrue(System.nanoTime() - closed < TimeUnit.SECONDS.toNanos(2), "not after the session's deadline");
        } finally {
            session.close();
        }
    }

    private static DiscoException openFails(String connectString) {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(1_000)
                .retryPolicy(new RetryNTimes(0, 100))
                .build();
        client.start();
        try {
            return assertThrows(
                    DiscoException.class,
                    () -> ZooKeeperSession.open(
                                    client,
                                    ZooKeeperOptions.builder()
                                            .connectTimeout(Duration.ofSeconds(1))
                                            .build())
                            .close());
        } finally {
            client.close();
        }
    }

    @Test
    void aRefusedPortAndAnUnknownHostSayWhy() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String refused = "127.0.0.1:" + port;
        DiscoException r = openFails(refused);
        System.out.println("refused: " + r.getMessage());
        assertTrue(
                r.getMessage().contains(refused)
                        && r.getMessage().toLowerCase(Locale.ROOT).contains("refused"),
                r.getMessage());

        String unknown = "disco-no-such-host.invalid:2181";
        DiscoException u = openFails(unknown);
        System.out.println("unknown host: " + u.getMessage());
        assertTrue(u.getMessage().contains(unknown) && u.getMessage().contains("unknown host"), u.getMessage());
    }
}
