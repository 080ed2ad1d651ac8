package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.testservers.ZooKeeperExtension;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The application's client on its one {@code CuratorFramework} ({@link ZooKeeperProvider}, issue 47, item 1): every
 * owner a session on that client, the next one after a loss on the same client (on Curator's new ZooKeeper session
 * after an expiry, on the same one when only this library declared the loss), the client never closed by it, and
 * closed first detected.
 */
class ZooKeeperProviderTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static long sessionOf(CuratorFramework client) throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    /** A token of a hold of {@code name}, released at once. */
    private static FencingToken hold(Disco disco, String name) throws InterruptedException {
        FencedLock lock = disco.lock(name);
        assertTrue(lock.tryLock(10, TimeUnit.SECONDS), "locked " + name);
        try {
            return lock.token();
        } finally {
            lock.unlock();
        }
    }

    @Test
    void theClientRunsOnTheApplicationsCuratorFrameworkAndNeverClosesIt() throws Exception {
        CuratorFramework curator = ZkContractBackend.client(ZK.connectString(), 10_000);
        try {
            String name = "/provider/" + UUID.randomUUID();
            ZooKeeperOptions options = ZooKeeperOptions.builder()
                    .clientId("orders-1")
                    .requestTimeout(Duration.ofSeconds(5))
                    .build();
            Disco disco = ZooKeeperProvider.disco(curator, options);
            DiscoStatus status = disco.status();
            assertEquals(DiscoStatus.State.UP, status.state());
            assertEquals(Long.toHexString(sessionOf(curator)), status.owner().orElseThrow(), "the client's session");
            assertEquals(Duration.ofMillis(10_000), status.ttl());

            FencedLock lock = disco.lock(name);
            lock.lock();
            List<Claimant> claimants = disco.claimants(Primitive.LOCK, name);
            assertEquals(1, claimants.size(), claimants.toString());
            assertEquals(
                    "orders-1",
                    claimants.get(0).madeByDisco().map(ClaimMetadata::clientId).orElseThrow(),
                    "the client id in the node's data");
            assertEquals(
                    lock.token().value(), claimants.get(0).token().orElseThrow().value());
            String node = claimants.get(0).key();

            disco.close();
            assertEquals(CuratorFrameworkState.STARTED, curator.getState(), "the application's client stays open");
            assertEquals(null, curator.checkExists().forPath(node), "the close released the lock");
            assertTrue(curator.getZookeeperClient().isConnected());
        } finally {
            curator.close();
        }
    }

    @Test
    void afterAnExpiryTheNextOwnerIsCuratorsNewSessionOnTheSameClient() throws Exception {
        CuratorFramework curator = ZkContractBackend.client(ZK.connectString(), 4_000);
        try (Disco disco = ZooKeeperProvider.healingDisco(curator, ZkContractBackend.options())) {
            String name = "/provider/" + UUID.randomUUID();
            long first = sessionOf(curator);
            FencedLock lock = disco.lock(name);
            lock.lock();
            FencingToken before = lock.token();

            BackendHooks.endSession(curator.getZookeeperClient().getZooKeeper(), ZK.connectString());

            Awaitility.await()
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> disco.status()
                            .owner()
                            .filter(o -> !o.equals(Long.toHexString(first)))
                            .isPresent());
            long second = sessionOf(curator);
            assertNotEquals(first, second, "Curator made a new session after the expiry");
            assertEquals(Long.toHexString(second), disco.status().owner().orElseThrow());
            assertThrows(io.disco.lock.LockLostException.class, lock::unlock, "the hold made before reports the loss");
            FencingToken after = hold(disco, name);
            assertTrue(after.isNewerThan(before), before + " then " + after);
            assertEquals(CuratorFrameworkState.STARTED, curator.getState());
        } finally {
            curator.close();
        }
    }

    /**
     * The proxy is frozen past the session's deadline ({@code 2T/3}, when this library declares the loss) and thawed
     * at once, before the server's timeout {@code T}: the server kept the session, so the client's next owner is a
     * new {@code ZooKeeperSession} on the same ZooKeeper session; the lost hold's node, still there on the server,
     * is deleted in the background, and the name is taken again with a newer token (not queued for ever behind it).
     */
    @Test
    void aLossDeclaredWhileTheServerKeptTheSessionReopensOnTheSameSessionAndLeavesNothingBehind() throws Exception {
        String cs = ZK.connectString();
        try (FreezableProxy proxy = new FreezableProxy(Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1)))) {
            CuratorFramework curator = ZkContractBackend.client(proxy.connectString(), 6_000);
            CuratorFramework admin = ZkContractBackend.client(cs, 10_000);
            try (Disco disco = ZooKeeperProvider.healingDisco(curator, ZkContractBackend.options())) {
                String name = "/provider/" + UUID.randomUUID();
                long session = sessionOf(curator);
                FencedLock lock = disco.lock(name);
                lock.lock();
                FencingToken before = lock.token();

                proxy.freeze();
                try {
                    Awaitility.await()
                            .atMost(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(20))
                            .until(() -> disco.status().state() == DiscoStatus.State.HEALING);
                } finally {
                    proxy.thaw();
                }
                Awaitility.await()
                        .atMost(Duration.ofSeconds(15))
                        .until(() -> disco.status().state() == DiscoStatus.State.UP);
                assertEquals(session, sessionOf(curator), "the server kept the session");
                assertEquals(Long.toHexString(session), disco.status().owner().orElseThrow());
                assertThrows(io.disco.lock.LockLostException.class, lock::unlock);

                FencingToken after = hold(disco, name);
                assertTrue(after.isNewerThan(before), before + " then " + after);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> admin.getChildren().forPath(name).isEmpty());
            } finally {
                admin.close();
                curator.close();
            }
        }
    }

    @Test
    void theApplicationsCuratorFrameworkClosedFirstStopsTheClientSayingSo() throws Exception {
        CuratorFramework curator = ZkContractBackend.client(ZK.connectString(), 10_000);
        Disco disco = ZooKeeperProvider.disco(curator, ZkContractBackend.options());
        curator.close();
        DiscoStatus status = disco.status();
        assertEquals(DiscoStatus.State.CLOSED, status.state());
        assertTrue(status.lastProblem().orElseThrow().contains("closed before"), status.toString());
        IllegalStateException refused = assertThrows(
                IllegalStateException.class, () -> disco.lock("/provider/x").lock());
        assertTrue(refused.getMessage().contains("closed before"), refused.getMessage());
        disco.close();
    }

    @Test
    void aClientNotStartedOrClosedIsRefusedSayingWhatToDo() {
        CuratorFramework latent = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryNTimes(0, 100));
        IllegalStateException notStarted = assertThrows(
                IllegalStateException.class, () -> ZooKeeperProvider.disco(latent, ZooKeeperOptions.defaults()));
        assertTrue(notStarted.getMessage().contains("LATENT: start it"), notStarted.getMessage());
        latent.start();
        latent.close();
        IllegalStateException closed = assertThrows(
                IllegalStateException.class, () -> ZooKeeperProvider.healingDisco(latent, ZooKeeperOptions.defaults()));
        assertTrue(closed.getMessage().contains("STOPPED"), closed.getMessage());
    }

    @Test
    void unreachableTheClientFailsOrHealsNamingTheConnectString() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String nobody = "127.0.0.1:" + port;
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(nobody)
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(500)
                .retryPolicy(new RetryNTimes(0, 100))
                .build();
        curator.start();
        try {
            ZooKeeperOptions options = ZooKeeperOptions.builder()
                    .connectTimeout(Duration.ofMillis(500))
                    .build();
            DiscoException failed = assertThrows(DiscoException.class, () -> ZooKeeperProvider.disco(curator, options));
            assertTrue(
                    failed.getMessage().contains(nobody) && failed.getMessage().contains("refused"),
                    failed.getMessage());
            try (Disco healing = ZooKeeperProvider.healingDisco(curator, options)) {
                DiscoStatus status = healing.status();
                assertEquals(DiscoStatus.State.HEALING, status.state());
                assertTrue(status.lastProblem().orElseThrow().contains(nobody), status.toString());
            }
            assertFalse(curator.getState() == CuratorFrameworkState.STOPPED, "never closed by the client");
        } finally {
            curator.close();
        }
    }
}
