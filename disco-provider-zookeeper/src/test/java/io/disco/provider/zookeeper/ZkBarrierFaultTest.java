package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.contract.ContractSupport;
import io.disco.contract.StallableClient;
import io.disco.fencing.DiscoException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.ZooKeeper;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The barrier steps of a ZooKeeper owner ({@link ZkBarriers}, {@link ZkBarrierParticipant}) under attack, through the
 * SPI as the client drives it: a wait cancelled as its answer lands (the next step acts after the cancelled one's
 * requests were answered), cancelled waits leave no watcher behind, the session's end under a wait, and a link to
 * the server that stalls mid-request.
 */
class ZkBarrierFaultTest extends ContractSupport {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }

    private DiscoBackend.Owner owner() {
        return owner(10);
    }

    private static String name(String what) {
        return "/barrier-faults/" + what + "/" + UUID.randomUUID();
    }

    private static <T> T soon(CompletableFuture<T> f) throws Exception {
        return f.get(SOON.toMillis(), MILLISECONDS);
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> soon(f)).getCause();
    }

    @Test
    void anEnterCancelledWhileItsCreateIsInFlightIsWithdrawnWithItsNode() throws Exception {
        DiscoBackend.Owner o = owner();
        String name = name("cancelled-enter");
        for (int i = 0; i < 20; i++) {
            Barriers.Participant p = o.barriers().participant(name, 2);
            CompletableFuture<Void> enter = p.enter();
            enter.cancel(false); // most often before the create is answered
            assertTrue(soon(p.withdraw()), "nobody else came: withdrawn");
            assertEquals(List.of(), keys(name), "the node created after the cancel went with the withdraw");
        }
    }

    @Test
    void aCancelLandingWithTheOpeningIsEitherWithdrawnOrInside() throws Exception {
        DiscoBackend.Owner o = owner();
        DiscoBackend.Owner other = owner();
        int withdrawn = 0;
        int inside = 0;
        for (int i = 0; i < 10; i++) {
            String name = name("cancel-at-opening");
            Barriers.Participant waiting = other.barriers().participant(name, 2);
            CompletableFuture<Void> waits = waiting.enter();
            Awaitility.await().atMost(SOON).until(() -> keys(name).size() == 1);
            Barriers.Participant p = o.barriers().participant(name, 2);
            CompletableFuture<Void> enter = p.enter();
            enter.cancel(false); // the count completes as the cancel lands
            if (soon(p.withdraw())) {
                withdrawn++;
                assertStillWaiting(waits, "withdrawn: the other one must not pass");
                assertEquals(1, keys(name).size(), "only the other one's node");
                waits.cancel(false);
                assertTrue(soon(waiting.withdraw()));
            } else {
                inside++;
                soon(waits); // inside: the barrier opened for both
                assertEquals(2, keys(name).size());
                soon(p.remove());
                soon(waiting.remove());
            }
            assertEquals(List.of(), keys(name));
        }
        assertEquals(10, withdrawn + inside);
    }

    @Test
    void cancelledWaitsLeaveNoWatcherBehind() throws Exception {
        String name = name("cancelled-waits");
        ZK.admin().create().creatingParentContainersIfNeeded().forPath(name);
        SessionOwner o = (SessionOwner) owner();
        List<CompletableFuture<Void>> waits = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            waits.add(o.barriers().lowered(name));
        }
        Awaitility.await().atMost(SOON).until(() -> watches(o.handle()).contains(name));
        assertStillWaiting(waits.get(0), "the barrier is up");
        waits.forEach(w -> w.cancel(false));
        Awaitility.await().atMost(SOON).until(() -> !watches(o.handle()).contains(name));

        String double_ = name("cancelled-enters");
        Barriers.Participant p = o.barriers().participant(double_, 2);
        CompletableFuture<Void> enter = p.enter();
        Awaitility.await().atMost(SOON).until(() -> watches(o.handle()).contains(double_));
        enter.cancel(false);
        assertTrue(soon(p.withdraw()));
        Awaitility.await().atMost(SOON).until(() -> !watches(o.handle()).contains(double_));

        CompletableFuture<Void> after = o.barriers().lowered(name);
        ZK.admin().delete().forPath(name);
        soon(after); // a new wait still works
    }

    /** @return the paths {@code zk} holds a watch on (data, exists or children), from its own watch manager */
    @SuppressWarnings("unchecked")
    private static List<String> watches(ZooKeeper zk) throws Exception {
        List<String> paths = new ArrayList<>();
        for (String kind : List.of("getDataWatches", "getExistWatches", "getChildWatches")) {
            Method m = ZooKeeper.class.getDeclaredMethod(kind);
            m.setAccessible(true);
            paths.addAll((List<String>) m.invoke(zk));
        }
        return paths;
    }

    @Test
    void theSessionsEndFailsAParticipantsWaitAndStopsABarriersWait() throws Exception {
        String barrier = name("session-end-barrier");
        String double_ = name("session-end-double");
        ZK.admin().create().creatingParentContainersIfNeeded().forPath(barrier);
        DiscoBackend.Owner o = owner();
        CompletableFuture<Void> lowered = o.barriers().lowered(barrier);
        Barriers.Participant p = o.barriers().participant(double_, 2);
        CompletableFuture<Void> enter = p.enter();
        Awaitility.await().atMost(SOON).until(() -> keys(double_).size() == 1);

        ZK.backend().endOwner(o);
        soon(o.done().toCompletableFuture());
        assertInstanceOf(BarrierLostException.class, failure(enter), "the participant's node went with the session");
        assertEquals(List.of(), keys(double_));
        assertStillWaiting(lowered, "a barrier's wait is left to the client, which waits on through its next owner");
        assertTrue(lowered.cancel(false));

        Barriers.Participant late = o.barriers().participant(double_, 2);
        assertInstanceOf(BarrierLostException.class, failure(late.enter()), "no node on an ended session");
        assertEquals(List.of(), keys(double_));

        DiscoBackend.Owner closed = owner();
        CompletableFuture<Void> entering =
                closed.barriers().participant(double_, 2).enter();
        Awaitility.await().atMost(SOON).until(() -> keys(double_).size() == 1);
        closed.close();
        assertInstanceOf(IllegalStateException.class, failure(entering), "a closed session");
        Awaitility.await().atMost(SOON).until(() -> keys(double_).isEmpty());
    }

    @Test
    void closingASessionOnTheApplicationsClientDeletesItsParticipantsNodes() throws Exception {
        CuratorFramework app = ZkContractBackend.client(ZK.connectString(), 30_000);
        try {
            ZooKeeperSession session = ZooKeeperSession.open(app, ZkContractBackend.options());
            String alone = name("close-inside");
            String pair = name("close-entering");
            soon(session.barriers().participant(alone, 1).enter()); // inside
            CompletableFuture<Void> entering =
                    session.barriers().participant(pair, 2).enter();
            Awaitility.await().atMost(SOON).until(() -> keys(pair).size() == 1);
            assertEquals(1, keys(alone).size());

            session.close(); // the application's client, and its ZooKeeper session, stay open
            assertInstanceOf(IllegalStateException.class, failure(entering));
            Awaitility.await()
                    .atMost(SOON)
                    .until(() -> keys(alone).isEmpty() && keys(pair).isEmpty());
            assertEquals(CuratorFrameworkState.STARTED, app.getState());
        } finally {
            app.close();
        }
    }

    @Test
    void aStalledLinkFailsARequestInTimeAndAWaitRidesThrough() throws Exception {
        StallableClient stallable = ZK.stallableBackend(Duration.ofSeconds(30), Duration.ofSeconds(1));
        DiscoBackend.Owner o = track(stallable.backend().open());
        String name = name("stalled");
        String up = name("stalled-up");
        ZK.admin().create().creatingParentContainersIfNeeded().forPath(up);
        CompletableFuture<Void> lowered = o.barriers().lowered(up);
        assertStillWaiting(lowered, "the barrier is up");

        stallable.link().stall();
        try {
            CompletableFuture<Boolean> raise = o.barriers().raise(name);
            Throwable late = failure(raise);
            assertInstanceOf(DiscoException.class, late, "no answer within the request timeout");
            assertTrue(late.getMessage().contains("did not answer in time"), late.getMessage());
            ZK.admin().delete().forPath(up); // lowered while the link is stalled
            assertStillWaiting(lowered, "nothing reaches a stalled link");
        } finally {
            stallable.link().resume();
        }
        soon(lowered); // the watch's event arrives once the link runs again
        Awaitility.await()
                .atMost(SOON)
                .until(() -> ZK.admin().checkExists().forPath(name) != null); // the raise was applied on resume
        assertFalse(soon(o.barriers().raise(name)), "up already");
        assertTrue(soon(o.barriers().lower(name)));
    }
}
