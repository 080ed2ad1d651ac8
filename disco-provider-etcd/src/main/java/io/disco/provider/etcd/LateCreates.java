package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The session's janitor for create Txns whose outcome is unknown. Such a Txn (its answer lost, or its
 * member frozen) may still be applied at any later moment while the lease lives: a member that
 * resumes proposes what it had received. The key it creates is the session's own key name, under its
 * live lease, and would block every other owner until the session ends.
 *
 * <p>So once a claim gives up with an unknown outcome, its key is swept (read; an incarnation that
 * no claim or grant of the session owns is deleted, guarded by its CreateRevision) and then watched
 * for creations until the session ends; every incarnation created later that nobody owns is deleted
 * the same way. Ownership is asked of the service whose range holds the key
 * ({@link SessionMember#lateIncarnation}). An acquisition of that key waits until the janitor's
 * deletes of it are answered before it sends its create Txn ({@link #deleting}), so a delete can
 * never remove an incarnation that a new claim has adopted.
 *
 * <p>Confined to the session thread, except {@link #close()}.
 */
final class LateCreates {

    private static final CompletableFuture<Void> NONE = CompletableFuture.completedFuture(null);

    private final Client client;
    private final RequestPipeline requests;
    private final GuardedDelete guardedDelete;
    private final SessionWatches watches;
    private final ServiceRegistry services;
    private final SessionExecutors executors;
    private final ConcurrentHashMap<ByteSequence, Watch.Watcher> watched = new ConcurrentHashMap<>();
    // Session thread only.
    private final Map<ByteSequence, CompletableFuture<Void>> deletes = new HashMap<>();
    private volatile boolean closed;

    LateCreates(
            Client client,
            RequestPipeline requests,
            GuardedDelete guardedDelete,
            SessionWatches watches,
            ServiceRegistry services,
            SessionExecutors executors) {
        this.client = client;
        this.requests = requests;
        this.guardedDelete = guardedDelete;
        this.watches = watches;
        this.services = services;
        this.executors = executors;
    }

    /**
     * Sweeps {@code key} now and watches it for late creations until the session ends.
     *
     * @return completes once the sweep is done: nothing the late Txn created so far is left
     */
    CompletableFuture<Void> watch(ByteSequence key) {
        CompletableFuture<Void> swept = new CompletableFuture<>();
        sweep(key, swept);
        return swept;
    }

    /** What an acquisition of {@code key} must wait for before its create Txn: the janitor's deletes of it. */
    CompletableFuture<Void> deleting(ByteSequence key) {
        return deletes.getOrDefault(key, NONE);
    }

    /**
     * A delete of {@code key} whose answer is still to come (a release whose outcome is unknown): an
     * acquisition of the key waits for it too, since its create Txn would otherwise adopt the incarnation
     * being released, and its token with it.
     */
    void awaitDelete(ByteSequence key, CompletableFuture<Void> deleted) {
        deletes.merge(key, deleted, (a, b) -> CompletableFuture.allOf(a, b));
        deleted.whenComplete((v, e) ->
                executors.runOnSession(() -> deletes.computeIfPresent(key, (k, f) -> f.isDone() ? null : f)));
    }

    private void sweep(ByteSequence key, CompletableFuture<Void> swept) {
        if (closed) {
            swept.complete(null);
            return;
        }
        requests.untilAnswered("read of the own key", () -> client.getKVClient().get(key))
                .thenAccept((GetResponse r) -> {
                    if (r == null) {
                        swept.complete(null); // the session ended
                        return;
                    }
                    if (!r.getKvs().isEmpty()) {
                        created(key, r.getKvs().get(0).getCreateRevision());
                    }
                    deleting(key).whenComplete((v, de) -> swept.complete(null));
                    if (!closed && !watched.containsKey(key)) {
                        WatchOption opt = WatchOption.builder()
                                .withRevision(r.getHeader().getRevision() + 1)
                                .withNoDelete(true)
                                .withRequireLeader(true)
                                .withCreateNotify(true)
                                .build();
                        watched.put(
                                key,
                                watches.watch(
                                        key,
                                        opt,
                                        SessionWatches.Silence.GUARD,
                                        response -> onEvents(key, response),
                                        () -> broken(key)));
                        if (closed) {
                            close();
                        }
                    }
                });
    }

    private void onEvents(ByteSequence key, WatchResponse response) {
        for (WatchEvent ev : response.getEvents()) {
            if (ev.getEventType() == WatchEvent.EventType.PUT
                    && ev.getKeyValue().getCreateRevision() == ev.getKeyValue().getModRevision()) {
                created(key, ev.getKeyValue().getCreateRevision());
            }
        }
    }

    /** The watch ended (compacted, cancelled by the server): sweep and watch again, from a fresh read. */
    private void broken(ByteSequence key) {
        Watch.Watcher w = watched.remove(key);
        if (w != null) {
            w.close();
        }
        executors.schedule(() -> sweep(key, new CompletableFuture<>()), 100, TimeUnit.MILLISECONDS);
    }

    /** An incarnation of {@code key} created at {@code createRevision}: deleted unless a claim or grant owns it. */
    private void created(ByteSequence key, long createRevision) {
        if (closed) {
            return;
        }
        SessionMember owner = services.owning(key);
        CompletableFuture<?> ownership = owner == null ? null : owner.lateIncarnation(key, createRevision);
        if (ownership == null) {
            awaitDelete(key, guardedDelete.untilAnswered(key, createRevision));
        } else if (!ownership.isDone()) {
            ownership.whenComplete((v, e) -> executors.runOnSession(() -> created(key, createRevision)));
        }
    }

    /** The session ended: its lease, and so every key the janitor watches, is gone or about to be. */
    void close() {
        closed = true;
        watched.values().forEach(Watch.Watcher::close);
        watched.clear();
    }
}
