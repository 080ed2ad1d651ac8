package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits until at most {@code allowed} keys created at or before {@code maxCreateRevision} are left in
 * a key range: with {@code allowed == 0} the wait-for-predecessors step of etcd's Mutex, Election and
 * RWMutex recipes, with {@code allowed == limit - 1} the Go disco semaphore's wait. Confined to the
 * session thread.
 *
 * <p>With {@code allowed == 0} only the newest predecessor is watched (the last key created before this owner's), so a
 * release wakes exactly one waiter and the cost of a handoff does not grow with the queue. The
 * predecessor's watch starts at etcd's current revision, so etcd serves it at once (a watch that
 * starts at an older revision waits for etcd's 100 ms catch-up loop), and one re-read covers the gap
 * between the read that found the predecessor and the watch's start; every watch asks for a leader.
 * With {@code allowed > 0} any predecessor's delete can admit this waiter, so the whole range is
 * watched for deletes and every delete in it triggers a re-count (as in the Go semaphore, each
 * release wakes every waiter of the range; unlike it, the watch stays open across re-counts). When
 * the watch breaks, completes or is compacted away, the read and the watch are simply redone: a
 * compaction is never a failure, and neither is any other error that sending again may cure (no
 * leader, an unreachable or frozen member: see {@link EtcdErrors#isTransient}); such errors are
 * retried with backoff and logged. Any other error (permission denied, authentication failed) fails
 * the wait at once: retrying cannot cure it, and the caller must learn of it.
 *
 * <p>Every read of the predecessors reads the own key too, in one Txn (one revision, linearizable):
 * the read that finds few enough predecessors is also the proof that the own key is still there
 * (rule 2), so the claim is granted at that read's revision with nothing more to read, and a read
 * that finds the own key gone fails the wait with {@link OwnKeyDeletedException}. When the claim's
 * create Txn already named the newest predecessor, the wait starts by watching it, with no read. The
 * own key's deletes are watched by the claim ({@link OwnKeyWatch}), not here.
 */
final class PredecessorWait {

    private static final long MIN_BACKOFF_MS = 50;
    private static final long MAX_BACKOFF_MS = 1000;

    private final SessionCore session;
    private final KeyRange range;
    private final ByteSequence ownKey;
    private final long maxCreateRevision;
    private final int allowed;
    /** Completes with the revision of the read that found the own key in place and few enough predecessors. */
    final CompletableFuture<Long> future = new CompletableFuture<>();

    private Watch.Watcher predecessorWatch;
    private KeyValue predecessor;
    private long predecessorSeenAt;
    private long generation;
    private boolean stopped;
    private long backoffMs = MIN_BACKOFF_MS;

    private static final Logger LOG = LoggerFactory.getLogger(PredecessorWait.class);

    /** Thrown when the waiting owner's own key disappears: its claim is gone. */
    static final class OwnKeyDeletedException extends DiscoException {
        OwnKeyDeletedException(ByteSequence key) {
            super("own key " + key + " was deleted while waiting (lease expired or revoked)");
        }
    }

    /**
     * @param ownKey the waiting owner's key, created at {@code maxCreateRevision + 1}: every read of the
     *     predecessors reads it too, in one Txn, so the read that ends the wait also proves the key is
     *     still there (rule 2) and nothing more needs reading
     */
    PredecessorWait(SessionCore session, KeyRange range, ByteSequence ownKey, long maxCreateRevision, int allowed) {
        this.session = session;
        this.range = range;
        this.ownKey = ownKey;
        this.maxCreateRevision = maxCreateRevision;
        this.allowed = allowed;
    }

    /**
     * Starts waiting; must be called on the session thread.
     *
     * @param predecessor the newest predecessor, as the read at revision {@code seenAt} found it (the
     *     claim's create Txn), or null to read it first
     */
    PredecessorWait start(KeyValue predecessor, long seenAt) {
        if (predecessor == null || allowed > 0) {
            lookup();
        } else {
            watchPredecessor(predecessor, seenAt, ++generation);
        }
        return this;
    }

    /** Stops waiting and closes the watches; the future is left as it is. Session thread only. */
    void cancel() {
        stopped = true;
        generation++;
        close(predecessorWatch);
        predecessorWatch = null;
    }

    private void lookup() {
        if (stopped || future.isDone()) {
            return;
        }
        long gen = ++generation;
        read("read of the predecessors").whenComplete((r, e) -> {
            if (gen != generation || future.isDone()) {
                return;
            }
            if (e != null) {
                failed("read of the predecessors", e);
                return;
            }
            backoffMs = MIN_BACKOFF_MS;
            if (!ownKeyInPlace(r)) {
                return;
            }
            GetResponse predecessors = r.getGetResponses().get(1);
            if (predecessors.getKvs().size() <= allowed) {
                finish(r.getHeader().getRevision());
            } else if (allowed == 0) {
                watchPredecessor(predecessors.getKvs().get(0), r.getHeader().getRevision(), gen);
            } else {
                predecessorSeenAt = r.getHeader().getRevision();
                predecessorWatch = watch(range.start(), range.end(), gen);
            }
        });
    }

    /**
     * One Txn, so one revision: the own key, and the newest {@code allowed + 1} predecessors (more than
     * {@code allowed} of them means waiting on). Txn reads are linearizable.
     */
    private CompletableFuture<TxnResponse> read(String what) {
        GetOption ownKeyOnly = GetOption.builder().withKeysOnly(true).build();
        GetOption predecessors = GetOption.builder()
                .withRange(range.end())
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND)
                .withMaxCreateRevision(maxCreateRevision)
                .withLimit(allowed + 1)
                .withKeysOnly(true)
                .build();
        return session.rpc(
                what,
                () -> session.client()
                        .getKVClient()
                        .txn()
                        .Then(Op.get(ownKey, ownKeyOnly), Op.get(range.start(), predecessors))
                        .commit());
    }

    /** Rule 2: the own key must still be the incarnation that is waiting; otherwise the wait fails. */
    private boolean ownKeyInPlace(TxnResponse r) {
        List<KeyValue> own = r.getGetResponses().get(0).getKvs();
        if (own.isEmpty() || own.get(0).getCreateRevision() != maxCreateRevision + 1) {
            fail(new OwnKeyDeletedException(ownKey));
            return false;
        }
        return true;
    }

    /*
     * Watch the predecessor from "now": only a watcher that starts beyond etcd's current revision is
     * "synced"; any other waits for etcd's catch-up loop, which runs every 100 ms, and under contention
     * the revision has usually moved on since the read. The created answer says where the watch
     * started; if that is past the read, the predecessor may have gone in between: onCreated checks once.
     */
    private void watchPredecessor(KeyValue found, long seenAt, long gen) {
        predecessor = found;
        predecessorSeenAt = seenAt;
        predecessorWatch = watch(found.getKey(), null, gen);
    }

    private void onCreated(WatchResponse created, long gen) {
        if (stopped
                || future.isDone()
                || gen != generation
                || created.getHeader().getRevision() <= predecessorSeenAt) {
            return;
        }
        if (allowed > 0) {
            recount(gen);
            return;
        }
        KeyValue expected = predecessor;
        session.rpc(
                        "re-read of the predecessor",
                        () -> session.client().getKVClient().get(expected.getKey()))
                .whenComplete((r, e) -> {
                    if (stopped || future.isDone() || gen != generation) {
                        return;
                    }
                    if (e != null) {
                        close(predecessorWatch);
                        predecessorWatch = null;
                        failed("re-read of the predecessor", e);
                    } else if (r.getKvs().isEmpty()
                            || r.getKvs().get(0).getCreateRevision() != expected.getCreateRevision()) {
                        close(predecessorWatch);
                        predecessorWatch = null;
                        lookup(); // gone before the watch started
                    }
                });
    }

    /**
     * The range watch started after the read that counted too many: a delete in between is not in the
     * watch, so count once more; the watch covers every delete after it.
     */
    private void recount(long gen) {
        read("re-count of the predecessors").whenComplete((r, e) -> {
            if (stopped || future.isDone() || gen != generation) {
                return;
            }
            if (e != null) {
                close(predecessorWatch);
                predecessorWatch = null;
                failed("re-count of the predecessors", e);
            } else if (ownKeyInPlace(r) && r.getGetResponses().get(1).getKvs().size() <= allowed) {
                finish(r.getHeader().getRevision());
            }
        });
    }

    private Watch.Watcher watch(ByteSequence key, ByteSequence rangeEnd, long gen) {
        WatchOption.Builder b =
                WatchOption.builder().withCreateNotify(true).withNoPut(true).withRequireLeader(true);
        if (rangeEnd != null) {
            b.withRange(rangeEnd);
        }
        WatchOption opt = b.build();
        return session.watch(
                key, opt, SessionWatches.Silence.WAIT, response -> onEvents(response, gen), () -> onBroken(gen));
    }

    private void onEvents(WatchResponse response, long gen) {
        if (stopped || future.isDone() || gen != generation) {
            return;
        }
        if (response.isCreatedNotify()) {
            onCreated(response, gen);
            return;
        }
        for (WatchEvent ev : response.getEvents()) {
            if (ev.getEventType() == WatchEvent.EventType.DELETE && allowed > 0) {
                recount(gen); // the range watch stays: it covers every later delete
                return;
            }
            if (ev.getEventType() == WatchEvent.EventType.DELETE) {
                close(predecessorWatch);
                predecessorWatch = null;
                lookup();
                return;
            }
        }
    }

    private void onBroken(long gen) {
        if (stopped || future.isDone() || gen != generation) {
            return;
        }
        close(predecessorWatch);
        predecessorWatch = null;
        retryLater();
    }

    /** A read failed: retried when sending again may cure it, else the wait fails. */
    private void failed(String what, Throwable e) {
        if (!EtcdErrors.isTransient(e)) {
            fail(EtcdErrors.failure(what + " while waiting", e));
            return;
        }
        if (backoffMs >= MAX_BACKOFF_MS) {
            LOG.warn(
                    "{} of {} keeps failing, retrying every {} ms: {}",
                    what,
                    range,
                    MAX_BACKOFF_MS,
                    EtcdErrors.unwrap(e).getMessage());
        } else {
            LOG.debug(
                    "{} of {} failed, retrying in {} ms: {}",
                    what,
                    range,
                    backoffMs,
                    EtcdErrors.unwrap(e).getMessage());
        }
        retryLater();
    }

    private void retryLater() {
        long gen = ++generation;
        long delay = backoffMs;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        session.schedule(
                () -> {
                    if (gen == generation) {
                        lookup();
                    }
                },
                delay,
                TimeUnit.MILLISECONDS);
    }

    private void finish(long revision) {
        cancel();
        future.complete(revision);
    }

    private void fail(DiscoException e) {
        cancel();
        future.completeExceptionally(e);
    }

    private static void close(Watch.Watcher w) {
        if (w != null) {
            w.close();
        }
    }
}
