package io.disco.provider.zookeeper;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * One participant of a double barrier on ZooKeeper, on the nodes of Curator's {@code DistributedDoubleBarrier}, so
 * that Curator participants meet at the same barrier: its node is {@code name/<uuid>}, ephemeral on this session,
 * its data this library's claim metadata; the barrier is open once {@code name/ready} (persistent) is there.
 * <ul>
 *   <li><b>enter</b> creates the node, then counts the children other than {@code ready}: more than the number of
 *       participants, it deletes its node and fails (a previous round still leaving); that many, it creates
 *       {@code ready} (there already: fine) and passes; fewer, it waits (a children watch on {@code name}, which
 *       also fires when {@code ready} comes) and counts again on every event, passing once the count is reached or
 *       {@code ready} is there with a czxid above its own node's (opened after it entered: a {@code ready} left by
 *       a previous round does not let it pass, where Curator's would).</li>
 *   <li><b>withdraw</b> (an enter given up) counts the same way: open (it creates {@code ready} if the count is
 *       reached, so that Curator's participants, which wait for it, pass too), the node stays; else it is
 *       deleted.</li>
 *   <li><b>leave</b> reads the children (the round's other participants, at that moment), deletes its node, and
 *       waits (a children watch) until none of those is left; participants that come later belong to the next
 *       round. Then it deletes {@code ready}, as Curator's does.</li>
 *   <li><b>remove</b> deletes the node if it is there (Curator's guaranteed delete: retried in the background for
 *       as long as the client lives).</li>
 * </ul>
 * Each step is a {@link ZkStep}; a step starts only once the previous one has ended (its requests answered, even
 * when the client cancelled it), so a withdraw after an enter given up sees the enter's node if it was created. A
 * node found to belong to another session (the client came back on a new one while it was created) is deleted and
 * never used: the session is lost, and the step fails with it ({@link ZkBarriers}).
 */
final class ZkBarrierParticipant implements Barriers.Participant {

    /** Curator's name of the node that marks the barrier open. */
    static final String READY = "ready";

    private final SessionCore core;
    private final ZkBarriers barriers;
    private final String name;
    private final int participants;
    /**
     * The own node's name: a UUID, as Curator's, behind a {@code z-} that sorts it after every Curator participant
     * (whose names start with a hex digit). Curator's leave trusts its lowest participant to keep its node until it
     * is the last one in; a participant of this library deletes its node as soon as it leaves, so it must never be
     * the lowest of a mixed round.
     */
    private final String id = "z-" + UUID.randomUUID();

    private final String node;
    private final String ready;

    // guarded by this
    private final ArrayDeque<ZkStep<?>> queued = new ArrayDeque<>();
    private final ArrayDeque<Runnable> starts = new ArrayDeque<>();
    private boolean busy;
    /** The own node's czxid, once created (0 before, or when the create's answer was lost). */
    private long czxid;

    ZkBarrierParticipant(SessionCore core, ZkBarriers barriers, String name, int participants) {
        this.core = core;
        this.barriers = barriers;
        this.name = name;
        this.participants = participants;
        this.node = ZKPaths.makePath(name, id);
        this.ready = ZKPaths.makePath(name, READY);
    }

    // ------------------------------------------------------------------ the steps, one at a time

    /** Starts {@code start} once every earlier step has ended; a step cancelled before it started is skipped. */
    private <T> CompletableFuture<T> submit(ZkStep<T> step, Runnable start) {
        CompletableFuture<T> out = step.handOut();
        boolean now;
        synchronized (this) {
            now = !busy;
            if (now) {
                busy = true;
            } else {
                queued.add(step);
                starts.add(start);
            }
        }
        if (now) {
            begin(step, start);
        }
        return out;
    }

    /** The step in progress ended: the next one starts. */
    private void next() {
        while (true) {
            ZkStep<?> step;
            Runnable start;
            synchronized (this) {
                step = queued.poll();
                start = starts.poll();
                if (step == null) {
                    busy = false;
                    return;
                }
            }
            if (!step.result.isDone()) {
                begin(step, start);
                return;
            }
        }
    }

    /** Starts a step: the next one waits until it has ended. */
    private void begin(ZkStep<?> step, Runnable start) {
        step.onEnd(this::next);
        start.run();
    }

    // ------------------------------------------------------------------ enter

    @Override
    public CompletableFuture<Void> enter() {
        ZkStep<Void> step = new ZkStep<>(core, "entering the double barrier " + name);
        barriers.track(step, true);
        return submit(step, () -> create(step));
    }

    /** @return the own node's path */
    String node() {
        return node;
    }

    /** Creates the own node (found there after a lost answer: the same), then counts. */
    private void create(ZkStep<Void> step) {
        if (!barriers.seat(this)) {
            return; // the session ended: the step fails with it (ZkBarriers)
        }
        byte[] data = core.claimData();
        step.send(
                (c, w, cb) -> c.create()
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.EPHEMERAL)
                        .inBackground(cb)
                        .forPath(node, data),
                event -> {
                    if (event.getResultCode() == KeeperException.Code.OK.intValue() && event.getStat() != null) {
                        created(step, event.getStat());
                    } else if (event.getResultCode() == KeeperException.Code.OK.intValue()
                            || event.getResultCode() == KeeperException.Code.NODEEXISTS.intValue()) {
                        step.send((c, w, cb) -> c.checkExists().inBackground(cb).forPath(node), found -> {
                            if (found.getStat() != null) {
                                created(step, found.getStat());
                            } else { // gone again at once: deleted by somebody else
                                lostNode(step);
                            }
                        });
                    } else {
                        step.unexpected(event);
                    }
                });
    }

    private void created(ZkStep<Void> step, Stat stat) {
        String foreign = OwnNode.foreignOwner(node, stat, core.sessionId());
        if (foreign != null || barriers.ended()) { // never used: the session that waits on it ended
            barriers.unseat(this);
            core.deleteInBackground(node);
            return;
        }
        synchronized (this) {
            czxid = stat.getCzxid();
        }
        step.onChange(() -> count(step, false)); // every event counts again
        count(step, true);
    }

    /**
     * Counts the participants (with a children watch) and passes, refuses (only on the first count: later, more
     * than enough means the barrier opened meanwhile), or waits for the next event.
     */
    private void count(ZkStep<Void> step, boolean first) {
        step.send((c, w, cb) -> c.getChildren().usingWatcher(w).inBackground(cb).forPath(name), event -> {
            if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                lostNode(step);
                return;
            }
            if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                step.unexpected(event);
                return;
            }
            List<String> children = event.getChildren();
            if (!children.contains(id)) {
                lostNode(step);
                return;
            }
            int count = count(children);
            if (first && count > participants) {
                refuse(step, count);
            } else if (count >= participants) {
                open(step, () -> step.result.complete(null));
            } else if (children.contains(READY)) {
                openedSince(step, () -> step.result.complete(null), null);
            }
        });
    }

    /** More than enough: the own node goes, then the enter fails. */
    private void refuse(ZkStep<Void> step, int count) {
        step.send((c, w, cb) -> c.delete().inBackground(cb).forPath(node), deleted -> {
            if (deleted.getResultCode() != KeeperException.Code.OK.intValue()
                    && deleted.getResultCode() != KeeperException.Code.NONODE.intValue()) {
                step.unexpected(deleted);
                return;
            }
            barriers.unseat(this);
            step.result.completeExceptionally(new IllegalStateException("the double barrier " + name + " for "
                    + participants + " participants has " + count + " registered with this one (more than "
                    + participants + ": a previous round is still leaving?); this participant withdrew"));
        });
    }

    /** The count is reached: marks the barrier open ({@code ready}, there already or not), then {@code then}. */
    private void open(ZkStep<?> step, Runnable then) {
        step.send(
                (c, w, cb) -> c.create()
                        .withMode(CreateMode.PERSISTENT)
                        .inBackground(cb)
                        .forPath(ready),
                made -> {
                    if (made.getResultCode() == KeeperException.Code.OK.intValue()
                            || made.getResultCode() == KeeperException.Code.NODEEXISTS.intValue()) {
                        then.run();
                    } else if (made.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                        lostNode(step); // the directory went, and the own node with it
                    } else {
                        step.unexpected(made);
                    }
                });
    }

    /**
     * Runs {@code opened} if {@code ready} is there with a czxid above the own node's (the barrier opened after this
     * participant entered), else {@code closed} (if not null).
     */
    private void openedSince(ZkStep<?> step, Runnable opened, Runnable closed) {
        long own;
        synchronized (this) {
            own = czxid;
        }
        step.send((c, w, cb) -> c.checkExists().inBackground(cb).forPath(ready), seen -> {
            if (seen.getResultCode() == KeeperException.Code.OK.intValue()
                    && seen.getStat() != null
                    && own != 0
                    && seen.getStat().getCzxid() > own) {
                opened.run();
            } else if (seen.getResultCode() == KeeperException.Code.OK.intValue()
                    || seen.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                if (closed != null) {
                    closed.run();
                }
            } else {
                step.unexpected(seen);
            }
        });
    }

    /** The own node is gone while entering: deleted by somebody else, or the session ended with it. */
    private void lostNode(ZkStep<?> step) {
        barriers.unseat(this);
        step.result.completeExceptionally(new BarrierLostException(
                "the node " + node + " of this participant of the double barrier " + name + " is gone (deleted by"
                        + " somebody else, or its session ended): it is no longer counted",
                null));
    }

    private static int count(List<String> children) {
        int n = 0;
        for (String child : children) {
            if (!child.equals(READY)) {
                n++;
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ withdraw

    @Override
    public CompletableFuture<Boolean> withdraw() {
        ZkStep<Boolean> step =
                new ZkStep<Boolean>(core, "withdrawing from the double barrier " + name).bound(core.requestTimeout());
        return submit(step, () -> withdraw(step));
    }

    private void withdraw(ZkStep<Boolean> step) {
        step.send((c, w, cb) -> c.getChildren().inBackground(cb).forPath(name), event -> {
            if (event.getResultCode() == KeeperException.Code.NONODE.intValue()
                    || event.getResultCode() == KeeperException.Code.OK.intValue()
                            && !event.getChildren().contains(id)) {
                barriers.unseat(this);
                step.result.complete(true); // no key left
            } else if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                step.unexpected(event);
            } else if (count(event.getChildren()) >= participants) {
                open(step, () -> step.result.complete(false));
            } else if (event.getChildren().contains(READY)) {
                withOwnCzxid(step, () -> openedSince(step, () -> step.result.complete(false), () -> delete(step)));
            } else {
                delete(step);
            }
        });
    }

    /** Runs {@code then} once the own node's czxid is known (read, when the create's answer was lost). */
    private void withOwnCzxid(ZkStep<?> step, Runnable then) {
        synchronized (this) {
            if (czxid != 0) {
                then.run();
                return;
            }
        }
        step.send((c, w, cb) -> c.checkExists().inBackground(cb).forPath(node), event -> {
            if (event.getStat() != null) {
                synchronized (this) {
                    czxid = event.getStat().getCzxid();
                }
            }
            then.run();
        });
    }

    /** Deletes the own node (gone already: fine); completes {@code step} with true. */
    private void delete(ZkStep<Boolean> step) {
        step.send((c, w, cb) -> c.delete().guaranteed().inBackground(cb).forPath(node), deleted -> {
            if (deleted.getResultCode() == KeeperException.Code.OK.intValue()
                    || deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                barriers.unseat(this);
                step.result.complete(true);
            } else {
                step.unexpected(deleted);
            }
        });
    }

    // ------------------------------------------------------------------ leave

    @Override
    public CompletableFuture<Void> leave() {
        ZkStep<Void> step = new ZkStep<>(core, "leaving the double barrier " + name);
        barriers.track(step, true);
        return submit(step, () -> leave(step));
    }

    /** Reads the round (the others registered now), deletes the own node, waits for the round to be gone. */
    private void leave(ZkStep<Void> step) {
        step.send((c, w, cb) -> c.getChildren().inBackground(cb).forPath(name), event -> {
            Set<String> round = new HashSet<>();
            if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                round.addAll(event.getChildren());
            } else if (event.getResultCode() != KeeperException.Code.NONODE.intValue()) {
                step.unexpected(event);
                return;
            }
            round.remove(READY);
            round.remove(id);
            step.send((c, w, cb) -> c.delete().inBackground(cb).forPath(node), deleted -> {
                if (deleted.getResultCode() == KeeperException.Code.OK.intValue()
                        || deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    barriers.unseat(this);
                    step.read(() -> awaitGone(step, round));
                } else {
                    step.unexpected(deleted);
                }
            });
        });
    }

    /** Reads the children (with a watch) until none of {@code round} is left, then deletes {@code ready}. */
    private void awaitGone(ZkStep<Void> step, Set<String> round) {
        step.send((c, w, cb) -> c.getChildren().usingWatcher(w).inBackground(cb).forPath(name), event -> {
            if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                round.retainAll(event.getChildren());
            } else if (event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                round.clear();
            } else {
                step.unexpected(event);
                return;
            }
            if (round.isEmpty()) {
                step.send((c, w, cb) -> c.delete().inBackground(cb).forPath(ready), gone -> step.result.complete(null));
            }
        });
    }

    // ------------------------------------------------------------------ remove

    @Override
    public CompletableFuture<Void> remove() {
        ZkStep<Void> step = new ZkStep<Void>(core, "removing the participant " + node + " of the double barrier")
                .bound(core.requestTimeout());
        return submit(
                step,
                () -> step.send(
                        (c, w, cb) -> c.delete().guaranteed().inBackground(cb).forPath(node), deleted -> {
                            if (deleted.getResultCode() == KeeperException.Code.OK.intValue()
                                    || deleted.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                                barriers.unseat(this);
                                step.result.complete(null);
                            } else {
                                step.unexpected(deleted);
                            }
                        }));
    }

    @Override
    public String toString() {
        return "participant " + node + " of the double barrier for " + participants;
    }
}
