package io.disco.provider.zookeeper;

import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code LeaderLatch} protocol behind {@link ElectionService}: a candidate's node is
 * {@code <name>/_c_<uuid>-latch-<sequence>}, ephemeral-sequential on this owner's session, its data the
 * candidate's value; the first in sequence order leads, every other waits on its predecessor, so disco
 * candidates and {@code LeaderLatch}es on one name share one succession. The token of a term is the czxid of
 * the leader's own node (as for the lock); a node whose ephemeral owner is not this session is never used.
 * The term's start and every {@link #proclaim} append the value to the election's log in the directory's data
 * ({@link ElectionLog}), so that observers miss no value; {@link #leader()} and {@link #observe} read the lowest
 * node and its term's latest logged value (its node's data, the campaign value, if it logged none: a
 * {@code LeaderLatch}'s id). This class holds the election's hooks ({@link QueueProtocol}), its calls
 * (campaign, proclaim, resign, leader, observe) and its observations ({@link ZkObservation}); it makes itself on a
 * session ({@link #create}), and the grant's lifecycle is {@link ZkQueueService}'s.
 */
final class ZkElectionService extends ZkQueueService<Leadership, LeadershipLostException> implements ElectionService {

    private static final List<NodeKind> QUEUE = List.of(NodeKind.LATCH);

    /** Closes the session and client this service owns (a leadership runner's attempt), or does nothing. */
    private final Runnable afterClose;

    private final AtomicBoolean afterClosed = new AtomicBoolean();
    private final Object proclaiming = new Object();
    /** The term the history below belongs to (its czxid); guarded by {@link #proclaiming}. */
    private long termCzxid;
    /** The proclamations of that term so far; guarded by {@link #proclaiming}. */
    private int proclamations;
    /** Longer values are proclaimed without an entry in the directory's log ({@link ElectionLog}). */
    private static final int MAX_LOGGED_CHARS = 16 * 1024;

    private final List<ZkObservation> observations = new ArrayList<>();

    private ZkElectionService(SessionCore core, String name, Runnable afterClose) {
        super(core, name, Primitive.ELECTION, "election");
        this.afterClose = afterClose;
    }

    /**
     * Makes the election on {@code name} and registers it on its session.
     *
     * @param afterClose run once the election is closed (an election that owns its session and client), or null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     * @throws IllegalStateException if the session has a service on {@code name}, or is closed or lost
     */
    static ZkElectionService create(SessionCore core, String name, Runnable afterClose) {
        String checked = ZooKeeperNodes.checkName(name);
        return core.register(checked, false, () -> new ZkElectionService(core, checked, afterClose));
    }

    @Override
    List<NodeKind> queueKinds() {
        return QUEUE;
    }

    @Override
    String blocker(List<String> queue, int own, NodeKind kind) {
        return own == 0 ? null : queue.get(own - 1);
    }

    @Override
    Leadership grant(String node, NodeKind kind, Stat own) {
        throw new AssertionError("an election's grant needs its value");
    }

    /**
     * The term starts: its value goes into the election's log ({@link ElectionLog}) while the own node still
     * exists, so that an observer that reads only after the term ended still delivers it.
     */
    @Override
    Leadership grant(String node, NodeKind kind, Stat own, byte[] data) throws Exception {
        String value = new String(data, StandardCharsets.UTF_8);
        if (value.length() <= MAX_LOGGED_CHARS) {
            CuratorFramework c = core.client();
            ElectionLog.Entry entry = new ElectionLog.Entry(own.getCzxid(), 0, NodeKind.name(node), value);
            for (int attempt = 0; attempt < 20; attempt++) {
                Stat dir = new Stat();
                List<ElectionLog.Entry> log =
                        ElectionLog.decode(c.getData().storingStatIn(dir).forPath(name));
                if (log == null) {
                    break; // the directory's data is somebody else's: no log
                }
                try {
                    c.transaction()
                            .forOperations(
                                    c.transactionOp().check().forPath(node),
                                    c.transactionOp()
                                            .setData()
                                            .withVersion(dir.getVersion())
                                            .forPath(name, ElectionLog.append(log, entry)));
                    break;
                } catch (KeeperException.BadVersionException e) {
                    // another write to the log: read it again
                }
            }
        }
        return new Leadership(node, value, FencingToken.of(own.getCzxid()));
    }

    @Override
    LeadershipLostException lostException(String message, Throwable cause) {
        return new LeadershipLostException(message, cause);
    }

    @Override
    String modeName(NodeKind kind) {
        return "leadership";
    }

    // ------------------------------------------------------------------ campaign, proclaim, resign

    @Override
    public Leadership campaign(String value) throws InterruptedException {
        Objects.requireNonNull(value, "value");
        Optional<Leadership> held = held();
        if (held.isPresent()) {
            return value.equals(held.get().value()) ? held.get() : proclaim(value);
        }
        try {
            return acquire(NodeKind.LATCH, null, "election.campaign()", bytes(value));
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(value, "value");
        requireTimeout(timeout);
        Optional<Leadership> held = held();
        if (held.isPresent()) {
            return value.equals(held.get().value()) ? held.get() : proclaim(value);
        }
        return acquire(NodeKind.LATCH, timeout, "election.campaign()", bytes(value));
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        Objects.requireNonNull(value, "value");
        Optional<Leadership> held = held();
        if (held.isPresent() && !value.equals(held.get().value())) {
            return proclaimAsync(value);
        }
        return acquireAsync(NodeKind.LATCH, bytes(value));
    }

    /**
     * A proclamation appends the value to the election's log in the directory's data, in a transaction that checks
     * that the own node still exists; the own node's data (the campaign value) is not changed, because a
     * {@code LeaderLatch} waiting on this node watches it with a data watch that only a deletion re-arms: a data
     * change would leave it waiting for ever. Only when the directory's data is somebody else's (no log) is the
     * own node's data set instead.
     */
    @Override
    public Leadership proclaim(String value) {
        Objects.requireNonNull(value, "value");
        SessionThread.refuseOnSessionThread("election.proclaim()");
        synchronized (proclaiming) {
            Leadership l = held().orElseThrow(
                            () -> new NotLeaderException("this candidate does not lead the election on " + name));
            long czxid = l.token().value();
            if (termCzxid != czxid) { // the term's first proclamation
                termCzxid = czxid;
                proclamations = 0;
            }
            CuratorFramework c = core.client();
            for (int attempt = 0; ; attempt++) {
                try {
                    Stat dir = new Stat();
                    List<ElectionLog.Entry> log =
                            ElectionLog.decode(c.getData().storingStatIn(dir).forPath(name));
                    if (log == null || value.length() > MAX_LOGGED_CHARS) {
                        c.setData().forPath(l.key(), bytes(value)); // no log: the own node carries the value
                    } else {
                        ElectionLog.Entry entry =
                                new ElectionLog.Entry(czxid, proclamations + 1, NodeKind.name(l.key()), value);
                        c.transaction()
                                .forOperations(
                                        c.transactionOp().check().forPath(l.key()),
                                        c.transactionOp()
                                                .setData()
                                                .withVersion(dir.getVersion())
                                                .forPath(name, ElectionLog.append(log, entry)));
                    }
                    proclamations++;
                    break;
                } catch (KeeperException.NoNodeException e) {
                    heldNodeGone(l.key());
                    throw new NotLeaderException("the node " + l.key() + " of this candidate's term in the election on "
                            + name + " is gone: the term ended");
                } catch (KeeperException.BadVersionException e) {
                    if (attempt >= 20) { // another write to the log meanwhile: read it again
                        throw zkFailure("proclaiming (the election's log kept changing) in", e);
                    }
                } catch (Exception e) {
                    throw zkFailure("proclaiming in", e);
                }
            }
            Leadership next = l.withValue(value);
            replaceHeld(l, next); // false: resigned meanwhile; the proclamation still applied to this term
            return next;
        }
    }

    @Override
    public CompletableFuture<Leadership> proclaimAsync(String value) {
        Objects.requireNonNull(value, "value");
        return supplyInBackground(() -> proclaim(value));
    }

    @Override
    public void resign() {
        release(NodeKind.LATCH, "election.resign()");
    }

    @Override
    public CompletableFuture<Void> resignAsync() {
        return releaseAsync(NodeKind.LATCH, "election.resign()");
    }

    // ------------------------------------------------------------------ leader, observe

    @Override
    public Optional<Leadership> leader() {
        if (closed()) {
            throw new IllegalStateException("the election on " + name + " is closed");
        }
        try {
            while (true) {
                List<String> children;
                try {
                    children = core.client().getChildren().forPath(name);
                } catch (KeeperException.NoNodeException e) {
                    return Optional.empty();
                }
                List<String> queue = NodeKind.queue(children, QUEUE);
                if (queue.isEmpty()) {
                    return Optional.empty();
                }
                String node = ZKPaths.makePath(name, queue.get(0));
                Stat stat = new Stat();
                try {
                    byte[] data = core.client().getData().storingStatIn(stat).forPath(node);
                    String value = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8);
                    List<ElectionLog.Entry> log =
                            ElectionLog.decode(core.client().getData().forPath(name));
                    for (ElectionLog.Entry e : log == null ? List.<ElectionLog.Entry>of() : log) {
                        if (e.czxid() == stat.getCzxid()) {
                            value = e.value(); // the term's latest proclamation
                        }
                    }
                    return Optional.of(new Leadership(node, value, FencingToken.of(stat.getCzxid())));
                } catch (KeeperException.NoNodeException e) {
                    // the leader went since the listing: read again
                }
            }
        } catch (Exception e) {
            throw zkFailure("reading the leader of", e);
        }
    }

    @Override
    public Observation observe(Consumer<Leadership> listener) {
        Objects.requireNonNull(listener, "listener");
        ZkObservation o;
        synchronized (observations) {
            if (closed()) {
                throw new IllegalStateException("the election on " + name + " is closed");
            }
            o = new ZkObservation(core.client(), name, listener, this::forget);
            observations.add(o);
        }
        return o.start();
    }

    private void forget(ZkObservation o) {
        synchronized (observations) {
            observations.remove(o);
        }
    }

    // ------------------------------------------------------------------ close

    /** Resigns if leading, withdraws a pending campaign, stops every observation; then closes an owned session. */
    @Override
    public void close() {
        try {
            super.close();
        } finally {
            List<ZkObservation> toClose;
            synchronized (observations) {
                toClose = new ArrayList<>(observations);
            }
            toClose.forEach(ZkObservation::close);
            if (afterClose != null && afterClosed.compareAndSet(false, true)) {
                afterClose.run();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
