package io.disco.provider.zookeeper;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * The barriers of one ZooKeeper session ({@link Barriers}, the client's SPI), on the nodes of Curator's recipes so
 * that Curator processes meet at the same barriers. A barrier is Curator's {@code DistributedBarrier}: the node
 * {@code name} itself, persistent (it belongs to no session and outlives this one), its parents Curator's
 * containers, its data this library's claim metadata (host, pid) for whoever looks. A double barrier is Curator's
 * {@code DistributedDoubleBarrier}: {@link ZkBarrierParticipant}. Each step is a {@link ZkStep}; raise, lower and
 * isUp are one request each, bounded by the request timeout.
 *
 * <p>The session's end: the nodes of this session's participants are deleted (Curator's guaranteed delete), since a
 * session closed on the application's {@code CuratorFramework} ({@link ZooKeeperProvider}) leaves its ZooKeeper
 * session, and so its ephemeral nodes, alive; a participant's wait (enter, leave) fails with {@link BarrierLostException} when the session
 * is lost (its node went with it) and with {@link IllegalStateException} when it is closed, as the client reports
 * them; a {@link #lowered} wait is only stopped (its watch removed, nothing more sent) and left to the client, which
 * races every wait against the owner's end, cancels the wait, and waits on through its next owner: a failure would
 * reach the waiter instead, since the client takes a wait's outcome over the owner's end when both are there.
 */
final class ZkBarriers implements Barriers, SessionMember {

    /** What the barriers are registered as among the session's services: no ZooKeeper name, so no service's. */
    private static final String MEMBER = "(barriers)";

    private final SessionCore core;
    /** The waits in progress, told of the session's end. */
    private final Set<Waiting> waits = ConcurrentHashMap.newKeySet();
    /** The participants that have, or may have, a node: deleted at the session's end. */
    private final Set<ZkBarrierParticipant> seated = ConcurrentHashMap.newKeySet();

    private volatile boolean ended;

    /** A wait in progress, and what the session's end does to it. */
    private record Waiting(ZkStep<?> step, boolean failsWithSession) {}

    private ZkBarriers(SessionCore core) {
        this.core = core;
        core.done().whenComplete((v, e) -> waits.forEach(this::sessionEnded));
    }

    /**
     * Makes the barriers of a session and registers them among its services (told of its end).
     *
     * @throws IllegalStateException if the session is closed or lost
     */
    static ZkBarriers create(SessionCore core) {
        return core.register(MEMBER, true, () -> new ZkBarriers(core));
    }

    /**
     * A participant is about to create its node, which the session's end deletes.
     *
     * @return false if the session has ended: no node
     */
    boolean seat(ZkBarrierParticipant p) {
        seated.add(p);
        if (ended) {
            seated.remove(p);
            return false;
        }
        return true;
    }

    /** A participant's node is gone (withdrawn, left, removed, refused). */
    void unseat(ZkBarrierParticipant p) {
        seated.remove(p);
    }

    /** @return whether the session has ended: a node created now must go at once */
    boolean ended() {
        return ended;
    }

    @Override
    public void sessionLost(String reason, Throwable cause) {
        unseatAll(); // a session declared lost by its deadline may still be there on the server
    }

    @Override
    public void sessionClosed() {
        unseatAll();
    }

    private void unseatAll() {
        ended = true;
        for (ZkBarrierParticipant p : seated) {
            seated.remove(p);
            core.deleteInBackground(p.node());
        }
    }

    @Override
    public CompletableFuture<Boolean> raise(String name) {
        ZkStep<Boolean> step = request("raising the barrier " + name);
        byte[] data = core.claimData();
        step.send(
                (c, w, cb) -> c.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.PERSISTENT)
                        .inBackground(cb)
                        .forPath(name, data),
                event -> answer(step, event, KeeperException.Code.NODEEXISTS));
        return step.handOut();
    }

    @Override
    public CompletableFuture<Boolean> lower(String name) {
        ZkStep<Boolean> step = request("lowering the barrier " + name);
        step.send(
                (c, w, cb) -> c.delete().inBackground(cb).forPath(name),
                event -> answer(step, event, KeeperException.Code.NONODE));
        return step.handOut();
    }

    @Override
    public CompletableFuture<Boolean> isUp(String name) {
        ZkStep<Boolean> step = request("reading the barrier " + name);
        synced(
                step,
                name,
                () -> step.send((c, w, cb) -> c.checkExists().inBackground(cb).forPath(name), event -> {
                    if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                        step.result.complete(event.getStat() != null);
                    } else if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                        step.result.complete(false);
                    } else {
                        step.unexpected(event);
                    }
                }));
        return step.handOut();
    }

    /** A one-request step, bounded by the request timeout. */
    private ZkStep<Boolean> request(String doing) {
        return new ZkStep<Boolean>(core, doing).bound(core.requestTimeout());
    }

    /** Completes {@code step}: true for OK, false for {@code no} (the node was there, or was not). */
    private static void answer(ZkStep<Boolean> step, CuratorEvent event, KeeperException.Code no) {
        if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
            step.result.complete(true);
        } else if (event.getResultCode() == no.intValue()) {
            step.result.complete(false);
        } else {
            step.unexpected(event);
        }
    }

    /**
     * Reads whether the node is there with an exists watch, and again after every event, until it is absent; a
     * re-creation after that does not matter. A connection failure reads again after a back-off.
     */
    @Override
    public CompletableFuture<Void> lowered(String name) {
        ZkStep<Void> step = new ZkStep<>(core, "waiting for the barrier " + name + " to be lowered");
        track(step, false);
        step.endOn(Watcher.Event.EventType.NodeDeleted); // its one watch is on the barrier's node: it was lowered
        step.read(() -> synced(
                step,
                name,
                () -> step.send(
                        (c, w, cb) ->
                                c.checkExists().usingWatcher(w).inBackground(cb).forPath(name),
                        event -> {
                            if (event.getResultCode() == KeeperException.Code.NONODE.intValue()
                                    || event.getResultCode() == KeeperException.Code.OK.intValue()
                                            && event.getStat() == null) {
                                step.result.complete(null);
                            } else if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                                step.unexpected(event);
                            } // up: the watch tells of its deletion
                        })));
        return step.handOut();
    }

    /**
     * Runs {@code read} after a {@code sync} of {@code name}: a ZooKeeper server answers reads from what it has applied,
     * which a follower may not yet have of another client's write; without the sync, a waiter connected to a lagging
     * follower would find a barrier that another process has just raised still down, and pass it (as Curator's
     * {@code DistributedBarrier} can). Found by the chaos suite's barrier workload on ZooKeeper.
     */
    private static void synced(ZkStep<?> step, String name, Runnable read) {
        step.send((c, w, cb) -> c.sync().inBackground(cb).forPath(name), event -> {
            if (event.getResultCode() == KeeperException.Code.OK.intValue()
                    || event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                read.run();
            } else {
                step.unexpected(event);
            }
        });
    }

    @Override
    public Participant participant(String name, int participants) {
        if (participants < 1) {
            throw new IllegalArgumentException("a double barrier needs at least 1 participant, got " + participants);
        }
        return new ZkBarrierParticipant(core, this, ZooKeeperNodes.checkName(name), participants);
    }

    /**
     * Tells {@code step} of the session's end when it comes (at once if it came): a participant's wait fails, a
     * barrier's wait stops ({@code failsWithSession} false); the step is forgotten once it ends.
     */
    void track(ZkStep<?> step, boolean failsWithSession) {
        Waiting w = new Waiting(step, failsWithSession);
        waits.add(w);
        step.onExpired(() -> expired(step));
        step.result.whenComplete((v, e) -> waits.remove(w));
        if (core.done().isDone()) {
            sessionEnded(w);
        }
    }

    /** The session expired under {@code step} (an answer said so): as at the session's end, as a loss. */
    void expired(ZkStep<?> step) {
        waits.removeIf(w -> {
            if (w.step() != step) {
                return false;
            }
            if (w.failsWithSession()) {
                step.result.completeExceptionally(new BarrierLostException(
                        "the ZooKeeper session 0x"
                                + Long.toHexString(core.sessionId()) + " expired while " + step.doing
                                + "; its node is gone with it",
                        null));
            } else {
                step.stop();
            }
            return true;
        });
    }

    private void sessionEnded(Waiting w) {
        waits.remove(w);
        if (!w.failsWithSession()) {
            w.step().stop();
            return;
        }
        DiscoException loss = core.lossOrNull();
        w.step()
                .result
                .completeExceptionally(
                        loss != null
                                ? new BarrierLostException(
                                        "the ZooKeeper session 0x" + Long.toHexString(core.sessionId()) + " was lost"
                                                + " while " + w.step().doing + "; its node is gone with it: "
                                                + loss.getMessage(),
                                        loss)
                                : new IllegalStateException("the ZooKeeper session 0x"
                                        + Long.toHexString(core.sessionId()) + " was closed while "
                                        + w.step().doing));
    }

    @Override
    public String toString() {
        return "ZooKeeper barriers of " + core;
    }
}
