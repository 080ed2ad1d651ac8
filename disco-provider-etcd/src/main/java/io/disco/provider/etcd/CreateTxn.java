package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A claim's create Txn ({@link QueueClaim}'s first step): create the own key, leased, if it is absent (else
 * adopt it, keeping its CreateRevision), and read in the same Txn who is ahead in the wait range. Its answer
 * is read by {@link CreateAnswer}. Sent again on another member while unanswered, so it is harmless when
 * applied twice or late.
 */
final class CreateTxn {

    private CreateTxn() {}

    /**
     * One Txn: create the own key if absent (else adopt it, keeping its CreateRevision), and read who
     * is ahead. In the Then branch the new key is the newest of all, so every other key of the wait
     * range is ahead of it: their names (the newest {@link Ahead#readLimit} by CreateRevision, keys only)
     * are what the wait counts down as their deletes come, and the wait needs no read of its own. In the Else branch (an
     * adopted key, whose CreateRevision is older) the first-created key of the range says whether
     * anyone is ahead, and the wait reads the rest. jetcd lists only the Get results: the Then
     * branch's read is at index 0, the Else branch's at index 1, after the own key (rule 1; a straight
     * port of Go's {@code Responses[1]} is wrong).
     *
     * <p>The Txn is sent again on another member while unanswered ({@link SessionCore#rpc}), so it
     * must be harmless when applied twice or late: its Else branch only reads (Go's Campaign writes
     * the value there; the election writes it after adopting instead, guarded, see
     * {@link QueueClaim#adoptedValue}), and a copy applied after the key is gone is deleted by the session's
     * janitor. {@code copies} counts the copies sent.
     */
    static CompletableFuture<CreateAnswer> send(
            SessionCore session,
            String kind,
            ByteSequence ownKey,
            ByteSequence value,
            KeyRange range,
            int allowed,
            AtomicInteger copies) {
        Op count = Op.get(
                range.start(),
                GetOption.builder().withRange(range.end()).withCountOnly(true).build());
        Op ahead = Op.get(
                range.start(),
                GetOption.builder()
                        .withRange(range.end())
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.DESCEND)
                        .withLimit(Ahead.readLimit(allowed) + 1L) // the own key, when the range holds it
                        .withKeysOnly(true)
                        .build());
        Op firstCreated = Op.get(range.start(), range.firstCreated());
        Op put = Op.put(
                ownKey,
                value,
                PutOption.builder().withLeaseId(session.leaseId()).build());
        return session.rpc(kind + " acquire Txn", () -> {
                    copies.incrementAndGet();
                    return session.client()
                            .getKVClient()
                            .txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(put, ahead)
                            .Else(Op.get(ownKey, GetOption.DEFAULT), allowed == 0 ? firstCreated : count)
                            .commit();
                })
                .thenApply(r -> CreateAnswer.of(r, ownKey, allowed));
    }
}
