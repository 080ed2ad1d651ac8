package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.util.concurrent.CompletableFuture;

/**
 * The one way this library deletes a leased key: guarded by the CreateRevision of the incarnation
 * it means, so it never deletes somebody else's key, and a copy applied late, or a retry, is harmless
 * (rule 3).
 */
final class GuardedDelete {

    private GuardedDelete() {
    }

    /**
     * Deletes {@code key} if it is the incarnation created at {@code createRevision}, and in the same
     * Txn {@code alsoDelete}: what belongs to that incarnation (a semaphore permit's slot), which is
     * then still its own.
     */
    static CompletableFuture<TxnResponse> send(Client client, ByteSequence key, long createRevision, Op... alsoDelete) {
        Op[] ops = new Op[alsoDelete.length + 1];
        ops[0] = Op.delete(key, DeleteOption.DEFAULT);
        System.arraycopy(alsoDelete, 0, ops, 1, alsoDelete.length);
        return client.getKVClient().txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                .Then(ops)
                .commit();
    }

    /**
     * {@link #send} retried in the background until etcd answers. The returned future completes
     * then, or when the session ends (its lease, and so the key, is gone or about to be).
     */
    static CompletableFuture<Void> untilAnswered(RequestPipeline requests, Client client, ByteSequence key, long createRevision,
                                                 Op... alsoDelete) {
        return requests.untilAnswered("delete of the own key", () -> send(client, key, createRevision, alsoDelete))
                .thenApply(r -> null);
    }
}
