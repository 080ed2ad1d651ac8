package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * The one way this library deletes a leased key: guarded by the CreateRevision of the incarnation
 * it means, so it never deletes somebody else's key, and a copy applied late, or a retry, is harmless
 * (rule 3). One per session, for the withdrawals that must happen ({@link #untilAnswered}).
 */
final class GuardedDelete {

    private final Client client;
    private final RequestPipeline requests;
    private final LeaseKeeper lease;

    GuardedDelete(Client client, RequestPipeline requests, LeaseKeeper lease) {
        this.client = client;
        this.requests = requests;
        this.lease = lease;
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
        return client.getKVClient()
                .txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                .Then(ops)
                .commit();
    }

    /**
     * {@link #send} retried in the background until etcd answers. The returned future completes
     * then, or when the session ends (its lease, and so the key, is gone or about to be). A delete
     * that etcd refuses for a reason retrying cannot cure (permission denied, authentication failed,
     * any non-transient error) gives up the session's lease ({@link LeaseKeeper#abandon}): the key
     * then goes within one TTL instead of blocking the other owners for as long as the session lives,
     * and every service of the session reports the loss.
     */
    CompletableFuture<Void> untilAnswered(ByteSequence key, long createRevision, Op... alsoDelete) {
        return requests.untilAnswered(
                        "delete of the own key",
                        () -> send(client, key, createRevision, alsoDelete).whenComplete((r, e) -> {
                            if (e != null && !EtcdErrors.isTransient(e)) {
                                // Refused for good: the key would block others while the lease lives (see abandon).
                                lease.abandon("delete of the own key " + key.toString(StandardCharsets.UTF_8), e);
                            }
                        }))
                .thenApply(r -> null);
    }
}
