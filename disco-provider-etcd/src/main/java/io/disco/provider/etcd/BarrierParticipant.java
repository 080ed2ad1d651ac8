package io.disco.provider.etcd;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * One participant of a double barrier, with the keys of etcd's Go {@code recipe.DoubleBarrier}: its key under
 * {@code name/waiters/} on the session's lease; the barrier is open once {@code count} keys are there at once, and
 * the participant that sees them all puts {@code name/ready} (no lease), which the others wait for (a PUT after their
 * own key's creation). Leaving deletes the own key and waits for the keys that were there at that moment to go: the
 * participants of this round (Go's and Curator's lowest-and-highest dance, which watches two keys, can return while
 * a participant is still inside when the one it watches dies). The last one out deletes {@code name/ready}, guarded
 * by its ModRevision, so a next round's mark is never taken.
 *
 * <p>The own key's create Txn is sent again while unanswered (its Else branch recognises a copy that was applied);
 * if its outcome stays unknown, the session's janitor ({@link LateCreates}) sweeps the key and deletes any late
 * incarnation, so a participant that gave up is never counted afterwards.
 */
final class BarrierParticipant implements Barriers.Participant {

    private final SessionCore core;
    private final String name;
    private final int count;
    private final String keyName;
    private final ByteSequence key;
    private final ByteSequence waiters;
    private final ByteSequence ready;
    /** The own key's CreateRevision once created; failed if that is unknown. Null before {@link #enter()}. */
    private volatile CompletableFuture<Long> created;

    BarrierParticipant(SessionCore core, String name, int count, String keyName) {
        this.core = core;
        this.name = name;
        this.count = count;
        this.keyName = keyName;
        this.key = KeyRange.bytes(keyName);
        this.waiters = KeyRange.bytes(name + "/waiters/");
        this.ready = KeyRange.bytes(name + "/ready");
    }

    @Override
    public CompletableFuture<Void> enter() {
        CompletableFuture<Long> made = create();
        created = made;
        return then(
                made,
                revision -> new KeyWait(core, ready, false, WatchEvent.EventType.PUT) {
                    @Override
                    CompletableFuture<Long> read() {
                        return countOrOpen(revision);
                    }

                    @Override
                    boolean done(WatchEvent event) {
                        return true; // ready put after what was read: opened
                    }
                }.start());
    }

    /**
     * {@code first.thenCompose(next)}, where cancelling the result also cancels {@code first} and the future
     * {@code next} made (a wait, whose watch it closes): a plain {@code thenCompose} would leave them watching.
     */
    private static <A, T> CompletableFuture<T> then(
            CompletableFuture<A> first, Function<A, CompletableFuture<T>> next) {
        CompletableFuture<T> out = new CompletableFuture<>();
        out.whenComplete((t, e) -> first.cancel(false)); // does nothing once it is done
        first.whenComplete((a, failed) -> {
            if (failed != null) {
                out.completeExceptionally(failed);
                return;
            }
            if (out.isDone()) {
                return; // cancelled before it started
            }
            CompletableFuture<T> inner = next.apply(a);
            out.whenComplete((t, e) -> inner.cancel(false));
            inner.whenComplete((t, e) -> {
                if (e != null) {
                    out.completeExceptionally(e);
                } else {
                    out.complete(t);
                }
            });
        });
        return out;
    }

    /** The create Txn, sent again while unanswered: @return the own key's CreateRevision */
    private CompletableFuture<Long> create() {
        ByteSequence value = KeyRange.bytes(core.claimMetadata().now().toJson());
        return core.rpc(
                        "register " + keyName,
                        () -> kv().txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.version(0)))
                                .Then(Op.put(
                                        key,
                                        value,
                                        PutOption.builder()
                                                .withLeaseId(core.leaseId())
                                                .build()))
                                .Else(Op.get(key, GetOption.DEFAULT))
                                .commit())
                .thenApply(r -> {
                    if (r.isSucceeded()) {
                        return r.getHeader().getRevision();
                    }
                    List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
                    if (!kvs.isEmpty() && kvs.get(0).getLease() == core.leaseId()) {
                        return kvs.get(0).getCreateRevision(); // an earlier copy of this Txn was applied
                    }
                    throw new IllegalStateException(
                            "double barrier '" + name + "': the key " + keyName + " is another owner's");
                });
    }

    /**
     * Counts the participants and reads the open mark, at one revision: more than {@code count} fails (the own key
     * deleted first); exactly {@code count} opens the barrier (this participant puts the mark); a mark put after the
     * own key means it is open; else the revision read at, to watch the mark from.
     */
    private CompletableFuture<Long> countOrOpen(long createRevision) {
        return core.rpc(
                        "count the participants of " + name,
                        () -> kv().txn()
                                .Then(
                                        Op.get(
                                                waiters,
                                                GetOption.builder()
                                                        .isPrefix(true)
                                                        .withCountOnly(true)
                                                        .build()),
                                        Op.get(
                                                ready,
                                                GetOption.builder()
                                                        .withKeysOnly(true)
                                                        .build()))
                                .commit())
                .thenCompose(r -> {
                    long registered = r.getGetResponses().get(0).getCount();
                    List<KeyValue> mark = r.getGetResponses().get(1).getKvs();
                    if (registered > count) {
                        return core.deleteOwnKey(key, createRevision).<Long>thenApply(v -> {
                            throw new IllegalStateException("double barrier '" + name + "' for " + count
                                    + " participants has " + registered + " registered (a round still leaving, or"
                                    + " a participant that uses another count): this one is refused");
                        });
                    }
                    if (registered == count) {
                        return core.rpc("open " + name, () -> kv().put(ready, ByteSequence.EMPTY))
                                .thenApply(put -> KeyWait.DONE);
                    }
                    if (!mark.isEmpty() && mark.get(0).getModRevision() > createRevision) {
                        return CompletableFuture.completedFuture(KeyWait.DONE);
                    }
                    return CompletableFuture.completedFuture(r.getHeader().getRevision());
                });
    }

    @Override
    public CompletableFuture<Boolean> withdraw() {
        return created.handle((revision, unknown) -> revision)
                .thenCompose(revision -> revision == null
                        ? sweep().thenApply(v -> true)
                        : core.rpc(
                                        "withdraw " + keyName,
                                        () -> kv().txn()
                                                .If(
                                                        new Cmp(ready, Cmp.Op.LESS, CmpTarget.modRevision(revision)),
                                                        new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                                                .Then(Op.delete(key, DeleteOption.DEFAULT))
                                                .Else(Op.get(
                                                        ready,
                                                        GetOption.builder()
                                                                .withKeysOnly(true)
                                                                .build()))
                                                .commit())
                                .thenApply(r -> r.isSucceeded() || !openedAfter(r, revision)));
    }

    /** @return whether the Else branch of a withdrawal read a mark put after the own key */
    private static boolean openedAfter(TxnResponse r, long createRevision) {
        List<KeyValue> mark = r.getGetResponses().get(0).getKvs();
        return !mark.isEmpty() && mark.get(0).getModRevision() > createRevision;
    }

    @Override
    public CompletableFuture<Void> leave() {
        CompletableFuture<Long> leftAt = created.thenCompose(revision -> core.rpc(
                        "leave " + name,
                        () -> kv().txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
                                .Then(Op.delete(key, DeleteOption.DEFAULT))
                                .commit())
                .thenApply(deleted -> {
                    if (!deleted.isSucceeded()) {
                        throw new BarrierLostException(
                                "double barrier '" + name + "': the participant's key " + keyName + " was gone before"
                                        + " it left (its lease lost, or the key deleted from outside)",
                                null);
                    }
                    return deleted.getHeader().getRevision();
                }));
        return then(leftAt, this::othersGone);
    }

    /**
     * Waits until the participants registered at {@code leftAt} (the own key's delete) have all gone, then deletes the
     * open mark unless it was put after that.
     */
    private CompletableFuture<Void> othersGone(long leftAt) {
        Set<ByteSequence> round = new HashSet<>();
        long[] emptyAt = {0};
        boolean[] first = {true};
        CompletableFuture<Void> gone = new KeyWait(core, waiters, true, WatchEvent.EventType.DELETE) {
            @Override
            CompletableFuture<Long> read() {
                return core.rpc(
                                "read the participants of " + name,
                                () -> kv().get(
                                                waiters,
                                                GetOption.builder()
                                                        .isPrefix(true)
                                                        .withKeysOnly(true)
                                                        .build()))
                        .thenApply(r -> {
                            Set<ByteSequence> present = new HashSet<>();
                            for (KeyValue kv : r.getKvs()) {
                                if (kv.getCreateRevision() <= leftAt) {
                                    present.add(kv.getKey());
                                }
                            }
                            if (first[0]) {
                                round.addAll(present);
                                first[0] = false;
                            } else {
                                round.retainAll(present);
                            }
                            emptyAt[0] = r.getHeader().getRevision();
                            return round.isEmpty() ? DONE : r.getHeader().getRevision();
                        });
            }

            @Override
            boolean done(WatchEvent event) {
                round.remove(event.getKeyValue().getKey());
                emptyAt[0] = event.getKeyValue().getModRevision();
                return round.isEmpty();
            }
        }.start();
        return then(
                gone,
                v -> core.rpc(
                                "close " + name,
                                () -> kv().txn()
                                        .If(new Cmp(ready, Cmp.Op.LESS, CmpTarget.modRevision(emptyAt[0] + 1)))
                                        .Then(Op.delete(ready, DeleteOption.DEFAULT))
                                        .commit())
                        .thenApply(r -> (Void) null));
    }

    @Override
    public CompletableFuture<Void> remove() {
        CompletableFuture<Long> made = created;
        if (made == null) {
            return CompletableFuture.completedFuture(null);
        }
        return made.handle((revision, unknown) -> revision)
                .thenCompose(revision -> revision == null ? sweep() : core.deleteOwnKey(key, revision));
    }

    /** The own key's create has no known outcome: the janitor deletes it, and any incarnation applied later. */
    private CompletableFuture<Void> sweep() {
        CompletableFuture<Void> swept = new CompletableFuture<>();
        core.runOnSession(() -> core.lateCreates().watch(key).whenComplete((v, e) -> swept.complete(null)));
        return swept;
    }

    private KV kv() {
        return core.client().getKVClient();
    }
}
