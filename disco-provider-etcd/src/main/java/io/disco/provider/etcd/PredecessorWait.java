package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits until at most {@code allowed} keys created at or before {@code maxCreateRevision} are left in
 * a key range: with {@code allowed == 0} the wait-for-predecessors step of etcd's Mutex, Election and
 * RWMutex recipes, with {@code allowed == limit - 1} the Go disco semaphore's wait. Confined to the
 * session's context.
 *
 * <p>The wait knows the keys ahead by name ({@link Ahead}: from the claim's create Txn, or from a read).
 * When few are ahead ({@link #WATCH_ALL_AT} or fewer; always for a semaphore) it watches one range that
 * holds them and the own key, deletes only, from a revision at or below the one at which the names were
 * read. Each delete of a name ahead removes it; the delete that leaves at most {@code allowed} is the
 * moment of admission, and its revision is what the claim is granted at, with nothing more to read: no
 * key can be created ahead later, and since the own key is in the same watch, whose events come in
 * revision order, the own key was still there at that revision (rule 2: its delete at or below it fails
 * the wait with {@link OwnKeyDeletedException} instead). The Go recipes read after each delete instead (a
 * round trip to the leader inside every hand-off); the token is the same "revision at which nobody was
 * ahead any more", the earliest one.
 *
 * <p>Every waiter watching a range sees every delete in it, so a release costs one event per such waiter: a
 * claim further back in a long queue watches only the key {@link #WATCH_ALL_AT} places ahead of it (the horizon),
 * and when that key is deleted (in a first-come-first-served queue, after every key before it) it watches the range
 * and reads who is left; the last hand-off, the one the caller waits for, has no read in it either way. So a
 * release reaches at most {@link #WATCH_ALL_AT} waiters watching the range and one watching its key as a horizon.
 * A read is also made when the range watch started after the revision of the names (the gap between them is read,
 * with the watch kept: events that come meanwhile are held and applied after the read), when the names were only the
 * newest of a long queue and are all gone, and when the claim adopted its key (its create Txn read no names). Every
 * read of the keys ahead reads the own key too, in one Txn (one revision, linearizable): a read that finds it gone
 * fails the wait, and a read that finds few enough ahead admits the claim at its revision.
 *
 * <p>When a watch breaks, completes or is compacted away, the read and the watch are simply redone: a
 * compaction is never a failure, and neither is any other error that sending again may cure (no
 * leader, an unreachable or frozen member: see {@link EtcdErrors#isTransient}); such errors are
 * retried with backoff and logged. Any other error (permission denied, authentication failed) fails
 * the wait at once: retrying cannot cure it, and the caller must learn of it.
 */
final class PredecessorWait {

    /**
     * At most this many keys ahead, a claim watches them all (each release then costs an event per such waiter);
     * with more, the one this many places ahead (its horizon) alone.
     */
    static final int WATCH_ALL_AT = 4;

    private static final long MIN_BACKOFF_MS = 50;
    private static final long MAX_BACKOFF_MS = 1000;

    private final SessionCore session;
    private final KeyRange range;
    private final KeyRange watched;
    private final ByteSequence ownKey;
    private final long maxCreateRevision;
    private final int allowed;
    /** Completes with the revision at which the own key was in place and few enough keys were ahead. */
    final CompletableFuture<Long> future = new CompletableFuture<>();

    private Watch.Watcher watcher;
    /** Whether the watch is of the whole range (else of the horizon key). */
    private boolean watchingAll;
    /** The keys ahead, or null while they are being read. */
    private Ahead ahead;
    /** The deletes that came while the keys ahead were being read again: applied after the read, in order. */
    private List<WatchEvent> held;

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
     * @param range where the keys ahead are
     * @param watched the range watched: {@code range} when it holds the own key, else one that holds both (a
     *     read/write lock's reader waits on the writers, and its own key is a reader's)
     * @param ownKey the waiting owner's key, created at {@code maxCreateRevision + 1}
     */
    PredecessorWait(
            SessionCore session,
            KeyRange range,
            KeyRange watched,
            ByteSequence ownKey,
            long maxCreateRevision,
            int allowed) {
        this.session = session;
        this.range = range;
        this.watched = watched;
        this.ownKey = ownKey;
        this.maxCreateRevision = maxCreateRevision;
        this.allowed = allowed;
    }

    /**
     * Starts waiting; must be called in the session's context.
     *
     * @param known the keys ahead, as the claim's create Txn found them, or null to read them
     */
    PredecessorWait start(Ahead known) {
        if (known == null) {
            lookup();
        } else {
            follow(known, ++generation);
        }
        return this;
    }

    /** Stops waiting and closes the watch; the future is left as it is. Session context only. */
    void cancel() {
        stopped = true;
        generation++;
        close();
    }

    private boolean over(long gen) {
        return stopped || future.isDone() || gen != generation;
    }

    /** Reads the keys ahead, with no watch open, and follows what it finds. */
    private void lookup() {
        close();
        long gen = ++generation;
        read("read of the keys ahead", gen, r -> follow(r, gen));
    }

    /** Waits on the keys ahead {@code known}: admitted now if few enough, else watching them all or the horizon. */
    private void follow(Ahead known, long gen) {
        ahead = known;
        if (known.size() <= allowed) {
            admitted(known.knownAt(), gen);
        } else if (allowed > 0 || known.size() <= WATCH_ALL_AT) {
            watch(watched.start(), watched.end(), true, gen);
        } else {
            watch(known.newest(WATCH_ALL_AT).getKey(), null, false, gen);
        }
    }

    /** The horizon key is gone: watch the whole range, and read who is left once the watch has started. */
    private void watchAll() {
        close();
        ahead = null;
        watch(watched.start(), watched.end(), true, ++generation);
    }

    /**
     * Reads the own key and the keys ahead in one Txn (one revision, linearizable); {@code then} gets the keys
     * ahead, unless the wait is over, the read failed (retried or failed, see {@link #failed}) or found the own key
     * gone.
     */
    private void read(String what, long gen, Consumer<Ahead> then) {
        GetOption ownKeyOnly = GetOption.builder().withKeysOnly(true).build();
        GetOption keysAhead = GetOption.builder()
                .withRange(range.end())
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND)
                .withMaxCreateRevision(maxCreateRevision)
                .withLimit(Ahead.readLimit(allowed))
                .withKeysOnly(true)
                .build();
        session.rpc(
                        what,
                        () -> session.client()
                                .getKVClient()
                                .txn()
                                .Then(Op.get(ownKey, ownKeyOnly), Op.get(range.start(), keysAhead))
                                .commit())
                .whenComplete((r, e) -> {
                    if (over(gen)) {
                        return;
                    }
                    if (e != null) {
                        failed(what, e);
                        return;
                    }
                    backoffMs = MIN_BACKOFF_MS;
                    List<KeyValue> own = r.getGetResponses().get(0).getKvs();
                    if (own.isEmpty() || own.get(0).getCreateRevision() != maxCreateRevision + 1) {
                        fail(new OwnKeyDeletedException(ownKey)); // rule 2
                        return;
                    }
                    then.accept(Ahead.of(
                            r.getGetResponses().get(1).getKvs(),
                            ownKey,
                            allowed,
                            r.getHeader().getRevision()));
                });
    }

    /** Watches deletes from now: of the whole range, or of the newest key ahead; its first answer says from when. */
    private void watch(ByteSequence key, ByteSequence rangeEnd, boolean all, long gen) {
        watchingAll = all;
        WatchOption.Builder b =
                WatchOption.builder().withCreateNotify(true).withNoPut(true).withRequireLeader(true);
        if (rangeEnd != null) {
            b.withRange(rangeEnd);
        }
        watcher = session.watch(
                key, b.build(), SessionWatches.Silence.WAIT, response -> onEvents(response, gen), () -> onBroken(gen));
    }

    /*
     * The watch started "now": only a watcher that starts beyond etcd's current revision is "synced"; any other
     * waits for etcd's catch-up loop, which runs every 100 ms, and under contention the revision has usually moved
     * on since the names were read. The created answer says where the watch started: every delete after that
     * revision comes. Past the names' revision, a delete in between is not in the watch: the whole range's names
     * are read again (the watch stays), the newest key ahead is read once (gone since: read them all again).
     */
    private void onCreated(WatchResponse created, long gen) {
        if (ahead != null && created.getHeader().getRevision() <= ahead.knownAt()) {
            return;
        }
        if (watchingAll) {
            readAgain(gen); // names older than the watch, or none yet (the horizon key went)
            return;
        }
        KeyValue expected = ahead.newest(WATCH_ALL_AT);
        session.rpc(
                        "re-read of the horizon key",
                        () -> session.client().getKVClient().get(expected.getKey()))
                .whenComplete((r, e) -> {
                    if (over(gen)) {
                        return;
                    }
                    if (e != null) {
                        failed("re-read of the horizon key", e);
                    } else if (r.getKvs().isEmpty()
                            || r.getKvs().get(0).getCreateRevision() != expected.getCreateRevision()) {
                        watchAll(); // gone before the watch started
                    }
                });
    }

    /**
     * Reads the keys ahead again with the range watch open: the deletes it brings meanwhile are held, and those
     * after the read's revision are applied to its names.
     */
    private void readAgain(long gen) {
        ahead = null;
        held = new ArrayList<>();
        read("re-read of the keys ahead", gen, known -> {
            ahead = known;
            List<WatchEvent> meanwhile = held;
            held = null;
            if (known.size() <= allowed) {
                admitted(known.knownAt(), gen);
            } else if (allowed == 0 && known.size() > WATCH_ALL_AT) {
                close(); // the horizon key went before others ahead of it: a horizon further on
                follow(known, ++generation);
            } else {
                apply(meanwhile, gen);
            }
        });
    }

    private void onEvents(WatchResponse response, long gen) {
        if (over(gen)) {
            return;
        }
        if (response.isCreatedNotify()) {
            onCreated(response, gen);
        } else if (held != null) {
            held.addAll(response.getEvents());
        } else if (!watchingAll) {
            for (WatchEvent ev : response.getEvents()) {
                if (ev.getEventType() == WatchEvent.EventType.DELETE) {
                    watchAll(); // the horizon key is gone: few are left ahead, if the queue went in order
                    return;
                }
            }
        } else {
            apply(response.getEvents(), gen);
        }
    }

    /**
     * Applies deletes of the watched range, in revision order, to the names ahead. A delete of the own key fails the
     * wait; once few enough are left, the claim is admitted at that delete's revision, unless the same revision (one
     * Txn, or one lease's expiry) also deleted the own key.
     */
    private void apply(List<WatchEvent> events, long gen) {
        long admittedAt = 0;
        for (WatchEvent ev : events) {
            long revision = ev.getKeyValue().getModRevision();
            if (ev.getEventType() != WatchEvent.EventType.DELETE || revision <= ahead.knownAt()) {
                continue;
            }
            if (admittedAt != 0 && revision > admittedAt) {
                break;
            }
            if (ev.getKeyValue().getKey().equals(ownKey)) {
                fail(new OwnKeyDeletedException(ownKey));
                return;
            }
            if (admittedAt == 0 && ahead.deleted(ev.getKeyValue().getKey()) && ahead.size() <= allowed) {
                admittedAt = revision;
            }
        }
        if (admittedAt != 0) {
            admitted(admittedAt, gen);
        }
    }

    /** Few enough of the names read are left: admitted at {@code revision}, if the names were all that was ahead. */
    private void admitted(long revision, long gen) {
        if (ahead.complete()) {
            finish(revision);
        } else if (watchingAll && watcher != null) {
            readAgain(gen); // the newest of a long queue are gone: the older ones are read next
        } else {
            lookup();
        }
    }

    private void onBroken(long gen) {
        if (over(gen)) {
            return;
        }
        retryLater();
    }

    /** A read failed: the watch and the read are redone when sending again may cure it, else the wait fails. */
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
        close();
        held = null;
        long gen = ++generation;
        long delay = backoffMs;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        session.schedule(
                () -> {
                    if (gen == generation && !stopped && !future.isDone()) {
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

    private void close() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
    }
}
