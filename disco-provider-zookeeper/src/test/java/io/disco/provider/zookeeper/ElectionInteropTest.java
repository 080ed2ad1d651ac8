package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A disco election and Curator's own {@code LeaderLatch} on the same path share one succession, both ways: one
 * leader at a time, in creation order. A {@code LeaderLatch} reads a disco leader's campaign value as its
 * participant id (a proclaimed value lives in disco's log, not in the node the latch watches), disco reads a latch's id as its value, and the token of a disco term after a latch's
 * is still above every earlier token (czxids grow with every node). A latch sends no token.
 */
class ElectionInteropTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private DiscoBackend.Owner owner;
    private final List<LeaderLatch> latches = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (LeaderLatch l : latches) {
            if (l.getState() == LeaderLatch.State.STARTED) {
                l.close();
            }
        }
        if (owner != null) {
            owner.close();
        }
    }

    private LeaderLatch latch(String path, String id) throws Exception {
        LeaderLatch l = new LeaderLatch(ZK.admin(), path, id);
        latches.add(l);
        l.start();
        return l;
    }

    @Test
    void aDiscoLeaderKeepsALeaderLatchWaitingAndHandsOnToIt() throws Exception {
        String path = "/interop/election/" + UUID.randomUUID();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        ElectionService disco = owner.newElection(path);
        List<String> seen = new CopyOnWriteArrayList<>();
        Observation observation = disco.observe(l -> seen.add(l.value()));

        Leadership first = disco.campaign("disco-1");
        LeaderLatch curator = latch(path, "curator");
        assertFalse(curator.await(300, MILLISECONDS), "the latch led while disco did");
        assertEquals(2, ZK.backend().keys(path).size());
        // A proclamation goes to the election's log, not to the node a LeaderLatch watches (a data change would
        // consume the latch's watch, and the latch would never hear of the resignation): the latch keeps seeing
        // the campaign value, disco sees the proclaimed one.
        Leadership proclaimed = disco.proclaim("disco-2");
        assertEquals(first.token(), proclaimed.token());
        assertEquals(Optional.of(proclaimed), disco.leader());
        assertEquals("disco-1", curator.getLeader().getId());

        disco.resign();
        assertTrue(curator.await(5, SECONDS), "the latch leads once disco resigned");
        Leadership latchTerm = disco.leader().orElseThrow();
        assertEquals("curator", latchTerm.value());
        assertTrue(latchTerm.token().isNewerThan(first.token()));

        CompletableFuture<Leadership> again = disco.campaignAsync("disco-3");
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(path).size() == 2);
        assertFalse(again.isDone(), "disco led while the latch did");
        curator.close();
        Leadership third = again.get(5, SECONDS);
        assertTrue(third.token().isNewerThan(latchTerm.token()));
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> seen.equals(List.of("disco-1", "disco-2", "curator", "disco-3")));
        observation.close();
        disco.resign();
    }

    @Test
    void aLeaderLatchKeepsDiscoWaitingAndHandsOnToIt() throws Exception {
        String path = "/interop/election/" + UUID.randomUUID();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        ElectionService disco = owner.newElection(path);

        LeaderLatch curator = latch(path, "curator");
        assertTrue(curator.await(5, SECONDS));
        assertThrows(TimeoutException.class, () -> disco.campaign("disco", Duration.ofMillis(300)));
        assertEquals(1, ZK.backend().keys(path).size(), "disco's withdrawn candidacy left its node");
        assertEquals("curator", disco.leader().orElseThrow().value());

        CompletableFuture<Leadership> waiting = disco.campaignAsync("disco");
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(path).size() == 2);
        assertFalse(waiting.isDone(), "disco led while the latch did");
        Leadership latchTerm = disco.leader().orElseThrow();
        curator.close();
        Leadership won = waiting.get(5, SECONDS);
        assertTrue(won.token().isNewerThan(latchTerm.token()));

        LeaderLatch second = latch(path, "curator-2");
        assertFalse(second.await(300, MILLISECONDS), "the latch led while disco did");
        assertEquals("disco", second.getLeader().getId());
        disco.resign();
        assertTrue(second.await(5, SECONDS), "the latch leads once disco resigned");
    }
}
