package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.Barrier;
import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.client.TestableBackend;
import io.disco.contract.ContractSupport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The client's barriers and Curator's own recipes on the same path, against a real ZooKeeper server: a
 * {@code DistributedBarrier} and a {@link Barrier} are one gate, both ways; {@code DistributedDoubleBarrier}
 * participants and {@link DoubleBarrier} participants enter together and leave together. Where Curator's recipe is
 * looser than ours (a {@code ready} node left by an earlier round lets its enter pass at once), a test shows what
 * ours does instead.
 */
class BarrierCuratorInteropTest extends ContractSupport {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private static final Duration BRIEFLY = Duration.ofMillis(300);

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }

    private Disco client() {
        return client(10);
    }

    private static String name(String what) {
        return "/interop/" + what + "/" + UUID.randomUUID();
    }

    private static <T> T soon(CompletableFuture<T> f) throws Exception {
        return f.get(SOON.toMillis(), MILLISECONDS);
    }

    private static void awaitChildren(String path, int count) {
        Awaitility.await()
                .pollInterval(Duration.ofMillis(20))
                .atMost(SOON)
                .until(() -> ZK.admin().checkExists().forPath(path) != null
                        && ZK.admin().getChildren().forPath(path).size() == count);
    }

    @Test
    void aCuratorBarrierHoldsJavaWaitersUntilCuratorRemovesIt() throws Exception {
        String path = name("barrier");
        DistributedBarrier curator = new DistributedBarrier(ZK.admin(), path);
        curator.setBarrier();
        Barrier java = client().barrier(path);
        assertTrue(java.isHeld(), "Curator's barrier node is the barrier");
        assertFalse(java.await(BRIEFLY), "a timed wait on Curator's barrier");
        CompletableFuture<Boolean> waiter = onThread(() -> {
            java.await();
            return true;
        });
        assertStillWaiting(waiter, "a Java waiter passed Curator's barrier while it was up");
        curator.removeBarrier();
        assertTrue(soon(waiter), "the Java waiter returns once Curator removed the barrier");
        assertFalse(java.isHeld());
    }

    @Test
    void aJavaBarrierHoldsCuratorWaitersUntilJavaReleasesIt() throws Exception {
        String path = name("barrier");
        Barrier java = client().barrier(path);
        assertTrue(java.hold());
        Stat stat = new Stat();
        byte[] data = ZK.admin().getData().storingStatIn(stat).forPath(path);
        assertEquals(0, stat.getEphemeralOwner(), "the barrier node belongs to no session");
        assertTrue(new String(data, StandardCharsets.UTF_8).contains("pid"), "the holder's metadata, for people");

        DistributedBarrier curator = new DistributedBarrier(ZK.admin(), path);
        assertFalse(curator.waitOnBarrier(BRIEFLY.toMillis(), MILLISECONDS), "Curator waits on the Java barrier");
        CompletableFuture<Boolean> waiter = onThread(() -> curator.waitOnBarrier(SOON.toMillis() * 2, MILLISECONDS));
        assertStillWaiting(waiter, "a Curator waiter passed the Java barrier while it was up");
        assertTrue(java.release());
        assertTrue(soon(waiter), "the Curator waiter returns once Java released the barrier");
        assertTrue(curator.waitOnBarrier(BRIEFLY.toMillis(), MILLISECONDS));
        assertNull(ZK.admin().checkExists().forPath(path));
    }

    @Test
    void curatorAndJavaParticipantsEnterTogetherAndLeaveTogether() throws Exception {
        String path = name("double-barrier");
        DistributedDoubleBarrier curator = new DistributedDoubleBarrier(ZK.admin(), path, 3);
        DoubleBarrier java1 = client().doubleBarrier(path, 3);
        DoubleBarrier java2 = client().doubleBarrier(path, 3);

        CompletableFuture<Boolean> curatorIn = onThread(() -> {
            curator.enter();
            return true;
        });
        CompletableFuture<Boolean> java1In = onThread(() -> {
            java1.enter();
            return true;
        });
        awaitChildren(path, 2);
        assertStillWaiting(curatorIn, "Curator's participant passed with 2 of 3 entered");
        assertFalse(java1In.isDone(), "a Java participant passed with 2 of 3 entered");
        assertEquals(2, ZK.backend().keys(path).size(), "both participants' nodes are the owners' keys");

        assertTrue(java2.enter(SOON), "the third completes the count");
        assertTrue(soon(curatorIn), "Curator's participant passed once the third entered");
        assertTrue(soon(java1In));
        assertNotNull(ZK.admin().checkExists().forPath(path + "/ready"), "the barrier is marked open for Curator");
        assertEquals(3, ZK.backend().keys(path).size(), "the persistent ready node is no owner's key");

        CompletableFuture<Boolean> java1Out = onThread(() -> {
            java1.leave();
            return true;
        });
        CompletableFuture<Boolean> java2Out = onThread(() -> {
            java2.leave();
            return true;
        });
        awaitChildren(path, 2); // Curator's node and ready
        assertStillWaiting(java1Out, "a Java participant left while Curator's was still inside");
        assertFalse(java2Out.isDone(), "a Java participant left while Curator's was still inside");

        assertTrue(curator.leave(SOON.toMillis(), MILLISECONDS), "Curator's participant, the last one out");
        assertTrue(soon(java1Out));
        assertTrue(soon(java2Out));
        assertEquals(List.of(), ZK.admin().getChildren().forPath(path), "every node gone, ready too");
    }

    /**
     * A mixed round whose Java participant leaves first: it removes its node at once, which Curator's leave would not
     * survive if that node were the lowest (the quirk below: a Curator participant in the middle would return with the
     * other Curator one still inside). A Java participant's node sorts after every Curator one, so the lowest of a
     * mixed round is always Curator's, which keeps its node to the end. With the Java node named by a bare UUID, as
     * Curator names its own, this test failed in both of two runs (the first Curator participant out returned early).
     */
    @Test
    void aJavaParticipantThatLeavesFirstNeverLetsACuratorOneOutEarly() throws Exception {
        for (int round = 0; round < 3; round++) {
            String path = name("double-barrier-mixed-leave");
            DistributedDoubleBarrier first = new DistributedDoubleBarrier(ZK.admin(), path, 3);
            DistributedDoubleBarrier second = new DistributedDoubleBarrier(ZK.admin(), path, 3);
            DoubleBarrier java = client().doubleBarrier(path, 3);
            CompletableFuture<Boolean> firstIn = onThread(() -> {
                first.enter();
                return true;
            });
            CompletableFuture<Boolean> secondIn = onThread(() -> {
                second.enter();
                return true;
            });
            awaitChildren(path, 2);
            assertTrue(java.enter(SOON));
            assertTrue(soon(firstIn));
            assertTrue(soon(secondIn));

            CompletableFuture<Boolean> javaOut = onThread(() -> {
                java.leave();
                return true;
            });
            CompletableFuture<Boolean> firstOut = onThread(() -> first.leave(SOON.toMillis() * 2, MILLISECONDS));
            assertStillWaiting(firstOut, "a Curator participant left while the other Curator one was inside");
            assertFalse(javaOut.isDone(), "the Java participant left while a Curator one was inside");
            assertTrue(second.leave(SOON.toMillis(), MILLISECONDS), "the last one out");
            assertTrue(soon(firstOut));
            assertTrue(soon(javaOut));
        }
    }

    /**
     * Curator's quirk (5.9): a leaving participant that is not the lowest deletes its node and watches the lowest,
     * trusting that the lowest keeps its node until it is the last one in; when the lowest goes it returns as soon as
     * a single node is left, without checking whose. So with a lowest participant that does not keep its node to the
     * end (one of ours, which removes its node at once as the client's contract says; one that gave up leaving; one
     * whose session ended), Curator's leave returns while the highest is still inside. The other participants here
     * are plain ephemeral nodes named to sort lowest and highest (a participant is only its node); ours waits for
     * both.
     */
    @Test
    void curatorsLeaveReturnsWithOneStillInsideButAJavaLeaveDoesNot() throws Exception {
        String path = name("double-barrier-leave");
        String lowest = path + "/0";
        String highest = path + "/~";
        ZK.admin()
                .create()
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL)
                .forPath(lowest);
        ZK.admin().create().withMode(CreateMode.EPHEMERAL).forPath(highest);
        DistributedDoubleBarrier curator = new DistributedDoubleBarrier(ZK.admin(), path, 3);
        assertTrue(curator.enter(SOON.toMillis(), MILLISECONDS), "the third completes the count");
        CompletableFuture<Boolean> curatorOut = onThread(() -> curator.leave(SOON.toMillis() * 2, MILLISECONDS));
        assertStillWaiting(curatorOut, "Curator's participant left with two inside");
        ZK.admin().delete().forPath(lowest);
        assertTrue(soon(curatorOut), "Curator's quirk: it left with the highest still inside");
        assertNotNull(ZK.admin().checkExists().forPath(highest), "the highest is still inside");
        ZK.admin().delete().forPath(highest);

        String ours = name("double-barrier-leave");
        ZK.admin()
                .create()
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL)
                .forPath(ours + "/0");
        ZK.admin().create().withMode(CreateMode.EPHEMERAL).forPath(ours + "/~");
        DoubleBarrier java = client().doubleBarrier(ours, 3);
        assertTrue(java.enter(SOON), "the third completes the count");
        CompletableFuture<Boolean> javaOut = onThread(() -> {
            java.leave();
            return true;
        });
        assertStillWaiting(javaOut, "a Java participant left with two inside");
        ZK.admin().delete().forPath(ours + "/0");
        assertStillWaiting(javaOut, "a Java participant left with the highest still inside");
        ZK.admin().delete().forPath(ours + "/~");
        assertTrue(soon(javaOut), "every other participant has left");
        assertNull(ZK.admin().checkExists().forPath(ours + "/ready"), "the last one out deleted ready");
    }

    /**
     * Curator's quirk: its enter checks whether {@code ready} exists before it registers, and passes at once if it
     * does, whoever made it and when; but {@code ready} is deleted only at the end of a leave, so one left behind
     * (a participant that died between deleting its node and deleting {@code ready}, or an earlier round still
     * leaving) lets a Curator participant pass alone. Ours passes only on a {@code ready} made after it entered.
     */
    @Test
    void aStaleReadyNodeLetsCuratorPassAloneButNotAJavaParticipant() throws Exception {
        String path = name("double-barrier-stale");
        ZK.admin().create().creatingParentContainersIfNeeded().forPath(path + "/ready"); // left by an earlier round

        DoubleBarrier java = client().doubleBarrier(path, 2);
        assertFalse(java.enter(BRIEFLY), "a Java participant does not pass alone on a stale ready node");
        assertEquals(List.of(), ZK.backend().keys(path), "and withdrew");

        DistributedDoubleBarrier curator = new DistributedDoubleBarrier(ZK.admin(), path, 2);
        assertTrue(curator.enter(BRIEFLY.toMillis(), MILLISECONDS), "Curator's quirk: it passes alone on it");
        assertEquals(1, ZK.backend().keys(path).size());
        assertTrue(curator.leave(SOON.toMillis(), MILLISECONDS));
    }

    /**
     * A leave waits only for the participants registered when it began: one that enters while the round is leaving
     * belongs to the next round (and, as in the recipe, counts with whoever of the old round is still inside). Curator's
     * leave waits for every node there is.
     */
    @Test
    void aJavaLeaveDoesNotWaitForALaterParticipant() throws Exception {
        String path = name("double-barrier-rounds");
        DoubleBarrier a = client().doubleBarrier(path, 2);
        DoubleBarrier b = client().doubleBarrier(path, 2);
        CompletableFuture<Boolean> aIn = onThread(() -> {
            a.enter();
            return true;
        });
        assertTrue(b.enter(SOON));
        assertTrue(soon(aIn));
        CompletableFuture<Boolean> aOut = onThread(() -> {
            a.leave();
            return true;
        });
        Awaitility.await().atMost(SOON).until(() -> ZK.backend().keys(path).size() == 1); // a has left, b is inside
        DoubleBarrier later = client().doubleBarrier(path, 2);
        assertTrue(later.enter(SOON), "b, still inside, completes its count");
        assertStillWaiting(aOut, "a left while b was still inside");
        assertFalse(b.leave(BRIEFLY), "the later one was registered when b left: b waits for it");
        assertTrue(soon(aOut), "a's round has left: the later participant does not hold a");
        assertTrue(later.leave(SOON), "alone");
        assertEquals(List.of(), ZK.backend().keys(path));
    }
}
