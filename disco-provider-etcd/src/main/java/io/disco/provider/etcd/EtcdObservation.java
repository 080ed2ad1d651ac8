package io.disco.provider.etcd;

import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Go's {@code Election.Observe}: delivers every change of an election's leader (a new term, or a new
 * value proclaimed in the current one), in order, on one dedicated thread.
 *
 * <p>It reads every candidate under the prefix (sorted by CreateRevision) and then watches the whole
 * prefix from the next revision, keeping the candidate set up to date event by event; after each
 * revision the leader is the candidate with the lowest CreateRevision, and it is delivered when it
 * differs from the last delivery. Tracking the whole set (rather than only the leader key, as Go does)
 * sees every term in order without a read per term. When the watch breaks, completes, loses its
 * leader or its member stops answering ({@link WatchLiveness}), a new watch resumes just after the
 * last revision whose events were processed, so no term is skipped. Only when etcd has compacted
 * that revision away are the read and the watch redone: terms that began and ended inside the
 * compacted gap cannot be seen, and the current leader is then delivered if it differs from the
 * last delivery, so the last delivery is always the latest leadership.
 *
 * <p>The state machine and the listener both run on the observation's own thread: jetcd's callbacks
 * (on its event loop) only hand over to it, and a blocking listener delays later deliveries but never
 * jetcd or the session. The observation does not use any lease.
 */
final class EtcdObservation implements Observation {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdObservation.class);
    private static final long MIN_BACKOFF_MS = 50;
    private static final long MAX_BACKOFF_MS = 1000;

    private final Client client;
    private final String name;
    private final KeyRange range;
    private final Duration requestTimeout;
    private final Consumer<Leadership> listener;
    private final Consumer<EtcdObservation> onClose;
    private final ScheduledThreadPoolExecutor exec;
    private final ReentrantLock delivering = new ReentrantLock();
    private volatile boolean closed;

    // Observation thread only.
    private final Map<ByteSequence, KeyValue> candidates = new HashMap<>();
    private Leadership lastDelivered;
    private final WatchLiveness liveness;
    private Watch.Watcher watcher;
    /** The revision the next watch starts at: just after the last one whose events were processed. */
    private long resumeFrom;

    private long generation;
    private long backoffMs = MIN_BACKOFF_MS;

    EtcdObservation(
            Client client,
            String name,
            KeyRange range,
            Duration requestTimeout,
            long probeTimeoutNanos,
            Consumer<Leadership> listener,
            Consumer<EtcdObservation> onClose) {
        this.client = client;
        this.name = name;
        this.range = range;
        this.requestTimeout = requestTimeout;
        this.listener = listener;
        this.onClose = onClose;
        this.exec = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "disco-election-observer-" + name);
            t.setDaemon(true);
            return t;
        });
        exec.setRemoveOnCancelPolicy(true);
        this.liveness = new WatchLiveness(exec, probeTimeoutNanos);
    }

    EtcdObservation start() {
        run(this::sync);
        return this;
    }

    @Override
    public void close() {
        stop();
        // Wait for a listener call in progress (a no-op when called from the listener: the lock is reentrant).
        delivering.lock();
        delivering.unlock();
    }

    /** Stops without waiting for a listener call in progress. */
    void stop() {
        if (closed) {
            return;
        }
        closed = true;
        run(() -> {
            generation++;
            closeWatch();
        });
        exec.shutdown();
        onClose.accept(this);
    }

    @Override
    public String toString() {
        return "EtcdObservation{" + name + '}';
    }

    // ---------------------------------------------------------------- observation thread

    private void run(Runnable task) {
        try {
            exec.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Reads every candidate, delivers the leader if it changed, and watches from the next revision. */
    private void sync() {
        if (closed) {
            return;
        }
        long gen = ++generation;
        closeWatch();
        GetOption all = GetOption.builder()
                .withRange(range.end())
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .build();
        client.getKVClient()
                .get(range.start(), all)
                .orTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((r, e) -> run(() -> synced(gen, r, e)));
    }

    private void synced(long gen, GetResponse r, Throwable e) {
        if (closed || gen != generation) {
            return;
        }
        if (e != null) {
            LOG.debug("observation of election {}: read failed, retrying: {}", name, String.valueOf(e));
            retryLater();
            return;
        }
        candidates.clear();
        for (KeyValue kv : r.getKvs()) {
            candidates.put(kv.getKey(), kv);
        }
        deliverLeader();
        resumeFrom = r.getHeader().getRevision() + 1;
        watch(gen);
    }

    /** Watches the candidates from {@link #resumeFrom}. */
    private void watch(long gen) {
        if (closed || gen != generation) {
            return;
        }
        WatchOption opt = WatchOption.builder()
                .withRange(range.end())
                .withRevision(resumeFrom)
                .withRequireLeader(true)
                .withCreateNotify(true)
                .build();
        // jetcd calls the listener on its event loop: hand over to the observation thread, never block there.
        watcher = liveness.open(
                l -> client.getWatchClient().watch(range.start(), opt, l),
                new Watch.Listener() {
                    @Override
                    public void onNext(WatchResponse response) {
                        run(() -> onEvents(gen, response));
                    }

                    @Override
                    public void onError(Throwable t) {
                        run(() -> broken(gen, t));
                    }

                    @Override
                    public void onCompleted() {
                        run(() -> broken(gen, null));
                    }
                },
                TimeUnit.SECONDS.toNanos(1),
                () -> {});
    }

    private void onEvents(long gen, WatchResponse response) {
        if (closed || gen != generation) {
            return;
        }
        backoffMs = MIN_BACKOFF_MS;
        List<WatchEvent> events = response.getEvents();
        for (int i = 0; i < events.size(); i++) {
            WatchEvent ev = events.get(i);
            KeyValue kv = ev.getKeyValue();
            if (ev.getEventType() == WatchEvent.EventType.PUT) {
                candidates.put(kv.getKey(), kv);
            } else if (ev.getEventType() == WatchEvent.EventType.DELETE) {
                candidates.remove(kv.getKey());
            }
            // A revision's events (one Txn) are never split across responses; judge the leader per revision.
            boolean lastOfRevision =
                    i == events.size() - 1 || events.get(i + 1).getKeyValue().getModRevision() != kv.getModRevision();
            if (lastOfRevision) {
                resumeFrom = kv.getModRevision() + 1;
                deliverLeader();
                if (closed) {
                    return;
                }
            }
        }
    }

    private void broken(long gen, Throwable t) {
        if (closed || gen != generation) {
            return;
        }
        closeWatch();
        CompactedException compacted = compaction(t);
        if (compacted != null) {
            LOG.info(
                    "observation of election {}: etcd compacted revision {} away before it was watched; re-reading"
                            + " (terms that began and ended before revision {} cannot be seen)",
                    name,
                    resumeFrom,
                    compacted.getCompactedRevision());
            retryLater();
            return;
        }
        LOG.debug(
                "observation of election {}: watch ended ({}), resuming at revision {}",
                name,
                t == null ? "completed" : String.valueOf(t),
                resumeFrom);
        long next = ++generation;
        schedule(() -> watch(next), backoffMs);
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    }

    private static CompactedException compaction(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof CompactedException) {
                return (CompactedException) c;
            }
        }
        return null;
    }

    private void retryLater() {
        long gen = ++generation;
        long delay = backoffMs;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        schedule(
                () -> {
                    if (gen == generation) {
                        sync();
                    }
                },
                delay);
    }

    private void schedule(Runnable task, long delayMs) {
        try {
            exec.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    private void deliverLeader() {
        KeyValue first = null;
        for (KeyValue kv : candidates.values()) {
            if (first == null || kv.getCreateRevision() < first.getCreateRevision()) {
                first = kv;
            }
        }
        if (first == null) {
            return; // no leader: nothing to deliver (as in Go)
        }
        Leadership l = new Leadership(
                first.getKey().toString(StandardCharsets.UTF_8),
                first.getValue().toString(StandardCharsets.UTF_8),
                FencingToken.of(first.getCreateRevision()));
        if (l.equals(lastDelivered)) {
            return;
        }
        lastDelivered = l;
        delivering.lock();
        try {
            if (!closed) {
                listener.accept(l);
            }
        } catch (RuntimeException e) {
            LOG.warn("observer of election {} threw on {}; observation goes on", name, l, e);
        } finally {
            delivering.unlock();
        }
    }

    private void closeWatch() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
    }
}
