package io.disco.provider.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;

/**
 * The token of a lock holder that waited, recorded in its claim key's value: etcd keeps that token (the
 * revision at which nobody was ahead any more) nowhere else, and the listing of claimants
 * ({@link ClaimantListing}) reads it there. One guarded Put, sent once and never awaited, once the hold has
 * lasted {@link #AFTER_MS}.
 */
final class TokenRecord {

    /**
     * How long a waited hold lasts before its token is recorded: the listing is for people, and a hold that ends
     * sooner is over before anyone could read it, so it costs etcd no write (in a busy queue, most hand-offs are
     * of such holds: the record was one request in five). Until it is recorded, the listing shows the holder
     * without a token.
     */
    static final long AFTER_MS = 50;

    private TokenRecord() {}

    /**
     * Records the holder's fencing token in its own key {@code ownKey}'s value ({@code json}, the claim's metadata
     * with the token), for the listing of claimants: a guarded Put (the incarnation created at
     * {@code myRevision} only, keeping the lease), sent once and not awaited, so that it delays no
     * hand-over; if it fails or comes too late, the listing shows no token for this holder. Waiters
     * watching this key see a PUT event, which etcd's Go recipes and this library's waits ignore.
     * Only for a key that nobody finds by its ModRevision: the lock's (Go's Mutex, etcdctl lock and
     * etcd's server-side Lock find predecessors by CreateRevision), never a read/write lock's (Go's
     * RWMutex finds blockers with {@code WithMaxModRev}, so a moved ModRevision lets a reader pass a
     * held writer; GoInteropTest.aJavaWriterAndGoReadersExcludeEachOther caught it).
     */
    static void send(SessionCore session, ByteSequence ownKey, long myRevision, String json) {
        session.rpcOnce(
                "record of the token in the own key",
                () -> session.client()
                        .getKVClient()
                        .txn()
                        .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)))
                        .Then(Op.put(
                                ownKey,
                                KeyRange.bytes(json),
                                PutOption.builder()
                                        .withLeaseId(session.leaseId())
                                        .build()))
                        .commit());
    }
}
