package io.disco.provider.zookeeper;

import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Observes an election on ZooKeeper: delivers every change of its leader (a new term, or a value the leader
 * proclaimed), in order, on one dedicated thread.
 *
 * <p>It watches the election's children, its directory's data (the proclamation log, {@link ElectionLog}) and
 * the data of every candidate, and reads each candidate's data when it first sees it, so the value a candidate
 * campaigned with is known before it leads. ZooKeeper's watches carry no data: on any event the observation
 * re-reads the children, the log and the leader's node, and delivers, in (term, version) order, every value it
 * has not delivered yet: the log's, also those of terms whose nodes are gone, each preceded by the value its term
 * campaigned with, then the leader's node as it is now. The leader is the lowest {@code latch-} node of a listing;
 * if its node is gone by the time it is read, the data read earlier stands for it. A disco leader logs its term's
 * start too, so its term is delivered even if it ended before the observation read. What ZooKeeper cannot give:
 * the term of a plain {@code LeaderLatch} (which logs nothing) whose node was created, led and deleted between two
 * reads of the observation is not delivered, nor are entries that fell out of the log before the observation
 * read it (more than {@link ElectionLog#MAX_ENTRIES} behind); the last delivery is always the latest leadership
 * it read.
 *
 * <p>Curator's event thread only schedules a re-read on the observation's thread, where the listener runs too;
 * a blocking listener delays later deliveries, never Curator or the session.
 */
final class ZkObservation implements Observation {

    private static final Logger LOG = LoggerFactory.getLogger(ZkObservation.class);
    private static final List<NodeKind> QUEUE = List.of(NodeKind.LATCH);

    private final CuratorFramework client;
    private final String path;
    private final Consumer<Leadership> listener;
    private final Consumer<ZkObservation> onClose;
    private final ScheduledThreadPoolExecutor exec;
    private final ReentrantLock delivering = new ReentrantLock();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final CuratorWatcher watcher = event -> schedule(0);
    private final ConnectionStateListener connection = (c, s) -> {
        if (s == ConnectionState.RECONNECTED || s == ConnectionState.CONNECTED) {
            schedule(0); // a new session lost the watches
        }
    };
    private volatile boolean closed;

    // the observation's thread only
    private static final Comparator<ElectionLog.Entry> ORDER =
            Comparator.comparingLong(ElectionLog.Entry::czxid).thenComparingInt(ElectionLog.Entry::version);
    /** The candidates' nodes as last read, by name. */
    private final Map<String, ElectionLog.Entry> candidates = new HashMap<>();
    /** The value each term campaigned with (its node at version 0), by czxid, while it may still be delivered. */
    private final Map<Long, ElectionLog.Entry> campaigned = new HashMap<>();

    private boolean delivered;
    private long lastCzxid;
    private int lastVersion = -1;
    private long backoffMs = 50;

    ZkObservation(
            CuratorFramework client, String path, Consumer<Leadership> listener, Consumer<ZkObservation> onClose) {
        this.client = client;
        this.path = path;
        this.listener = listener;
        this.onClose = onClose;
        this.exec = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "disco-observe-zk " + path);
            t.setDaemon(true);
            return t;
        });
        this.exec.setRemoveOnCancelPolicy(true);
    }

    ZkObservation start() {
        client.getConnectionStateListenable().addListener(connection);
        schedule(0);
        return this;
    }

    private void schedule(long delayMs) {
        if (closed || !scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            exec.schedule(this::refresh, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            scheduled.set(false); // closed
        }
    }

    private void refresh() {
        scheduled.set(false);
        if (closed) {
            return;
        }
        try {
            read();
            backoffMs = 50;
        } catch (Exception e) {
            if (!closed) {
                LOG.debug(
                        "observing the election on {} failed, reading again in {} ms: {}",
                        path,
                        backoffMs,
                        e.toString());
                long delay = backoffMs;
                backoffMs = Math.min(1000, backoffMs * 2);
                schedule(delay);
            }
        }
    }

    private void read() throws Exception {
        List<String> children;
        try {
            children = client.getChildren().usingWatcher(watcher).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            if (client.checkExists().usingWatcher(watcher).forPath(path) != null) {
                schedule(0); // created meanwhile
            }
            candidates.clear();
            return;
        }
        List<ElectionLog.Entry> log;
        try {
            log = ElectionLog.decode(client.getData().usingWatcher(watcher).forPath(path));
        } catch (KeeperException.NoNodeException e) {
            log = null;
        }
        List<String> queue = NodeKind.queue(children, QUEUE);
        candidates.keySet().retainAll(queue);
        String leader = null;
        for (int i = 0; i < queue.size(); i++) {
            String name = queue.get(i);
            if (i > 0 && candidates.containsKey(name)) {
                continue; // a waiting candidate's value is known; its data watch reports a change
            }
            Stat stat = new Stat();
            try {
                byte[] data = client.getData()
                        .storingStatIn(stat)
                        .usingWatcher(watcher)
                        .forPath(ZKPaths.makePath(path, name));
                ElectionLog.Entry read = new ElectionLog.Entry(
                        stat.getCzxid(),
                        stat.getVersion(),
                        name,
                        new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8));
                candidates.put(name, read);
                if (read.version() == 0) {
                    campaigned.put(read.czxid(), read);
                }
            } catch (KeeperException.NoNodeException e) {
                // gone since the listing: if it led then, the data read before stands for it
            }
            if (leader == null && candidates.containsKey(name)) {
                leader = name;
            }
        }
        if (leader == null) {
            return; // nothing is delivered while there is no leader
        }
        ElectionLog.Entry current = candidates.get(leader);
        for (ElectionLog.Entry e : log == null ? List.<ElectionLog.Entry>of() : log) {
            if (e.czxid() == current.czxid() && e.version() > current.version()) {
                current = e; // the leader's latest proclamation
            }
        }
        if (!delivered) { // the first delivery: the leader as it is now
            deliver(current);
            return;
        }
        // Every value not delivered yet, in (term, version) order: the log's (of terms that may be gone), the value
        // each of those terms campaigned with, and the leader's node as it is now.
        TreeMap<ElectionLog.Entry, ElectionLog.Entry> pending = new TreeMap<>(ORDER);
        List<ElectionLog.Entry> found = new ArrayList<>(log == null ? List.of() : log);
        found.add(current);
        for (ElectionLog.Entry e : found) {
            if (e.czxid() < current.czxid() || e.czxid() == current.czxid() && e.version() <= current.version()) {
                pending.put(e, e);
                ElectionLog.Entry first = campaigned.get(e.czxid());
                if (first != null) {
                    pending.put(first, first);
                }
            }
        }
        for (ElectionLog.Entry e : pending.values()) {
            if (e.czxid() > lastCzxid || e.czxid() == lastCzxid && e.version() > lastVersion) {
                if (!deliver(e)) {
                    return;
                }
            }
        }
        campaigned.keySet().removeIf(czxid -> czxid < lastCzxid);
    }

    private boolean deliver(ElectionLog.Entry e) {
        lastCzxid = e.czxid();
        lastVersion = e.version();
        delivered = true;
        Leadership l = new Leadership(ZKPaths.makePath(path, e.name()), e.value(), FencingToken.of(e.czxid()));
        delivering.lock();
        try {
            if (closed) {
                return false;
            }
            listener.accept(l);
        } catch (RuntimeException ex) {
            LOG.warn("an observer of the election on {} threw; the observation carries on", path, ex);
        } finally {
            delivering.unlock();
        }
        return true;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        client.getConnectionStateListenable().removeListener(connection);
        exec.shutdown();
        if (!delivering.isHeldByCurrentThread()) {
            delivering.lock(); // a delivery in progress finishes before close returns
            delivering.unlock();
        }
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "ZooKeeper observation of the election on " + path + (closed ? " (closed)" : "");
    }
}
