package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testing.MemberNetwork;
import io.disco.testing.ZooKeeperEnsemble;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The member partition of the etcd fault suite on a ZooKeeper ensemble whose members each run in a network
 * namespace of their own ({@link ZooKeeperEnsemble#startNetworked}): a follower cut off from the two others,
 * both ways, stops serving, so an owner that reaches only that minority member is never granted while an owner
 * on the majority side is. Needs root, iproute2 and nftables, as the chaos suite's member partitions do.
 */
class EnsemblePartitionTest {

    private static final int SESSION_MS = 3_000;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void closeOwners() throws Exception {
        threads.shutdownNow();
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private LockService lock(String connectString, String name) {
        CuratorFramework client = ZkContractBackend.client(connectString, SESSION_MS);
        closing.add(client);
        ZooKeeperSession session = ZooKeeperSession.open(client, ZkContractBackend.options());
        closing.add(session);
        return session.newLock(name);
    }

    @Test
    void anOwnerOnTheMinoritySideIsNeverGrantedWhileTheMajoritysIs() throws Exception {
        ZooKeeperEnsemble zk = ZooKeeperEnsemble.startNetworked(3);
        closing.add(zk);
        MemberNetwork net = zk.network().orElseThrow();
        int leader = zk.leader();
        int cut = (leader + 1) % zk.size();
        LockService minority = lock(zk.connectString(cut), "/partition/minority-" + UUID.randomUUID());
        LockService majority = lock(zk.connectString(leader), "/partition/majority-" + UUID.randomUUID());
        minority.lock(WAIT);
        minority.unlock(); // granted through that member while it is connected

        List<Integer> others = IntStream.range(0, zk.size()).filter(i -> i != cut).boxed().toList();
        net.cut(cut, others);
        others.forEach(o -> net.cut(o, List.of(cut)));
        try {
            Awaitility.await().atMost(WAIT).until(() -> !List.of("leader", "follower").contains(zk.modes().get(cut)));
            CompletableFuture<Grant> minorityGrant = CompletableFuture.supplyAsync(() -> {
                try {
                    return minority.lock(Duration.ofMillis(2 * SESSION_MS));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, threads);
            assertNotNull(majority.lock(WAIT), "the majority side's owner is granted");
            Awaitility.await().atMost(WAIT).until(minorityGrant::isDone);
            assertTrue(minorityGrant.isCompletedExceptionally(), "the minority side's owner must not be granted, got "
                    + (minorityGrant.isCompletedExceptionally() ? "" : minorityGrant.get(1, TimeUnit.SECONDS)));
            assertFalse(zk.modes().get(cut).equals("leader"), "the cut member does not lead: " + zk.modes());
        } finally {
            net.healAll();
        }
        zk.awaitHealthy(WAIT);
    }
}
