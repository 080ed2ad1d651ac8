package io.disco.provider.etcd;

import io.disco.client.Barriers;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A session's barrier steps ({@link Barriers}), with the keys of etcd's Go recipes: a barrier is the key
 * {@code name} itself, with no lease ({@code recipe.Barrier}); a double barrier's participants are keys under
 * {@code name/waiters/} on the session's lease and its open mark is {@code name/ready}
 * ({@code recipe.DoubleBarrier}, see {@link BarrierParticipant}).
 *
 * <p>Unlike Go's {@code Barrier.Wait}, which watches from the revision it read at and so returns at once when the
 * barrier's hold was the last write, a wait here watches from the revision after it.
 */
final class EtcdBarriers implements Barriers {

    private final SessionCore core;
    /** Numbers this session's participants: their keys are {@code name/waiters/<lease hex>-<n>}. */
    private final AtomicLong participants = new AtomicLong();

    EtcdBarriers(SessionCore core) {
        this.core = core;
    }

    @Override
    public CompletableFuture<Boolean> raise(String name) {
        ByteSequence key = KeyRange.bytes(name);
        ByteSequence value = KeyRange.bytes(core.claimMetadata().now().toJson());
        return core.rpcOnce(
                        "raise barrier " + name,
                        () -> kv().txn()
                                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.version(0)))
                                .Then(Op.put(
                                        key, value, PutOption.DEFAULT)) // no lease: the barrier outlives this session
                                .commit())
                .thenApply(r -> r.isSucceeded());
    }

    @Override
    public CompletableFuture<Boolean> lower(String name) {
        return core.rpcOnce("lower barrier " + name, () -> kv().delete(KeyRange.bytes(name)))
                .thenApply(r -> r.getDeleted() > 0);
    }

    @Override
    public CompletableFuture<Boolean> isUp(String name) {
        return core.rpc(
                        "read barrier " + name,
                        () -> kv().get(
                                        KeyRange.bytes(name),
                                        GetOption.builder().withCountOnly(true).build()))
                .thenApply(r -> r.getCount() > 0);
    }

    @Override
    public CompletableFuture<Void> lowered(String name) {
        ByteSequence key = KeyRange.bytes(name);
        return new KeyWait(core, key, false, WatchEvent.EventType.DELETE) {
            @Override
            CompletableFuture<Long> read() {
                return core.rpc(
                                "read barrier " + name,
                                () -> kv().get(
                                                key,
                                                GetOption.builder()
                                                        .withCountOnly(true)
                                                        .build()))
                        .thenApply(r -> r.getCount() == 0 ? DONE : r.getHeader().getRevision());
            }

            @Override
            boolean done(WatchEvent event) {
                return true; // a delete of the key
            }
        }.start();
    }

    @Override
    public Participant participant(String name, int count) {
        return new BarrierParticipant(
                core, name, count, name + "/waiters/" + core.leaseHex() + "-" + participants.incrementAndGet());
    }

    private KV kv() {
        return core.client().getKVClient();
    }
}
