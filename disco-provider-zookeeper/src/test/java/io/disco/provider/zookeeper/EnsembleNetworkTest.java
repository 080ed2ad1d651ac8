package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import io.disco.testservers.TcpProxy;
import io.disco.testservers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The network faults of the etcd fault suite on one ZooKeeper ensemble whose members each run in a network
 * namespace of their own ({@link ZooKeeperEnsemble#startNetworked}), their quorum and election ports behind
 * proxies: a follower cut off from the two others, both ways, stops serving, so an owner that reaches only
 * that minority member is never granted while an owner on the majority side is; and a write through a leader
 * whose peer links are slowed waits for a round trip over them. Needs root, iproute2 and nftables, as the chaos
 * suite's member partitions do. Each test heals what it did and waits for a healthy ensemble.
 */
class EnsembleNetworkTest {

    private static final int SESSION_MS = 3_000;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long SLOW_PEER_MILLIS = 150;

    private static ZooKeeperEnsemble zk;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() {
        zk = ZooKeeperEnsemble.startNetworked(3);
    }

    @AfterAll
    static void stop() {
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void closeOwners() throws Exception {
        threads.shutdownNow();
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** A client of that member alone (no ensemble tracker: it must not reconnect around a cut). */
    private CuratorFramework client(String connectString) {
        CuratorFramework client = ZkContractBackend.client(connectString, SESSION_MS);
        closing.add(client);
        return client;
    }

    private LockService lock(String connectString, String name) {
        ZooKeeperSession session = ZooKeeperSession.open(client(connectString), ZkContractBackend.options());
        closing.add(session);
        return session.newLock(name);
    }

    @Test
    void anOwnerOnTheMinoritySideIsNeverGrantedWhileTheMajoritysIs() throws Exception {
        MemberNetwork net = zk.network().orElseThrow();
        int leader = zk.leader();
        int cut = (leader + 1) % zk.size();
        LockService minority = lock(zk.connectString(cut), "/partition/minority-" + UUID.randomUUID());
        LockService majority = lock(zk.connectString(leader), "/partition/majority-" + UUID.randomUUID());
        minority.lock(WAIT);
        minority.unlock(); // granted through that member while it is connected

        List<Integer> others =
                IntStream.range(0, zk.size()).filter(i -> i != cut).boxed().toList();
        net.cut(cut, others);
        others.forEach(o -> net.cut(o, List.of(cut)));
        try {
            Awaitility.await()
                    .atMost(WAIT)
                    .until(() ->
                            !List.of("leader", "follower").contains(zk.modes().get(cut)));
            CompletableFuture<Grant> minorityGrant = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return minority.lock(Duration.ofMillis(2 * SESSION_MS));
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    threads);
            assertNotNull(majority.lock(WAIT), "the majority side's owner is granted");
            Awaitility.await().atMost(WAIT).until(minorityGrant::isDone);
            assertTrue(
                    minorityGrant.isCompletedExceptionally(),
                    "the minority side's owner must not be granted, got "
                            + (minorityGrant.isCompletedExceptionally() ? "" : minorityGrant.get(1, TimeUnit.SECONDS)));
            assertFalse(zk.modes().get(cut).equals("leader"), "the cut member does not lead: " + zk.modes());
        } finally {
            net.healAll();
        }
        zk.awaitHealthy(WAIT);
    }

    /**
     * The soak's finding (seed 20261206, runner workload): the leader drops what one follower sends, while the
     * follower still hears the leader and answers reads. The follower's owner must not count those local answers as
     * its session being alive: the leader hears nothing of the session (a follower passes its sessions' pings on
     * to the leader) and expires it after its timeout, and another owner is granted. The liveness request is a
     * {@code sync}, which the follower must pass to the leader and back, so the owner's validity runs out and it
     * declares itself lost before the other is granted.
     */
    @Test
    void anOwnerWhoseFollowerTheLeaderNoLongerHearsIsLostBeforeTheLeaderExpiresItsSession() throws Exception {
        MemberNetwork net = zk.network().orElseThrow();
        int leader = zk.leader();
        int follower = (leader + 1) % zk.size();
        String name = "/partition/one-way-" + UUID.randomUUID();
        ZooKeeperSession onFollower =
                ZooKeeperSession.open(client(zk.connectString(follower)), ZkContractBackend.options());
        closing.add(onFollower);
        LockService held = onFollower.newLock(name);
        held.lock(WAIT);
        LockService next = lock(zk.connectString(leader), name);
        CompletableFuture<Long> lostAt = held.done().toCompletableFuture().thenApply(v -> System.nanoTime());
        net.cut(leader, List.of(follower));
        long cutAt = System.nanoTime();
        try {
            CompletableFuture<Long> grantedAt = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            next.lock(WAIT);
                            return System.nanoTime();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    threads);
            long half = cutAt + TimeUnit.MILLISECONDS.toNanos(SESSION_MS / 2);
            Awaitility.await().atMost(WAIT).until(() -> System.nanoTime() - half >= 0 || lostAt.isDone());
            long validity = onFollower.remainingValidity().toMillis();
            assertTrue(
                    validity < SESSION_MS / 3,
                    "half a session timeout after the cut the owner still counts on " + validity
                            + " ms: answers of a follower the leader does not hear were taken for the session's life");
            long granted = grantedAt.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            long lost = lostAt.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(
                    lost < granted,
                    "the owner on the unheard follower learned of its loss "
                            + TimeUnit.NANOSECONDS.toMillis(lost - granted) + " ms after the next owner was granted");
        } finally {
            net.healAll();
        }
        zk.awaitHealthy(WAIT);
    }

    @Test
    void aWriteThroughALeaderWithSlowPeerLinksWaitsForTheirRoundTrip() throws Exception {
        int leader = zk.leader();
        PeerLinks peers = zk.peerLinks().orElseThrow();
        CuratorFramework client = client(zk.connectString(leader));
        String path = "/net-test/slow-peer-" + UUID.randomUUID();
        client.create().creatingParentsIfNeeded().forPath(path, new byte[] {1}); // connected, warm
        peers.degrade(leader, TcpProxy.Link.ofMillis(SLOW_PEER_MILLIS, 0, 0));
        long nanos;
        try {
            long start = System.nanoTime();
            client.setData().forPath(path, new byte[] {2});
            nanos = System.nanoTime() - start;
        } finally {
            peers.degrade(leader, TcpProxy.Link.CLEAN);
        }
        // the leader commits once a follower acknowledged the proposal: a round trip over the slowed
        // links, 2 x 150 ms at least; unslowed the write takes a few ms
        assertTrue(
                nanos >= TimeUnit.MILLISECONDS.toNanos(2 * SLOW_PEER_MILLIS),
                "a write through the leader zk"
                        + (leader + 1) + " with its peer links slowed " + SLOW_PEER_MILLIS + " ms took "
                        + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms");
        System.out.println("a write through the ZooKeeper leader with its peer links slowed " + SLOW_PEER_MILLIS
                + " ms: " + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms");
        zk.awaitHealthy(WAIT);
    }
}
