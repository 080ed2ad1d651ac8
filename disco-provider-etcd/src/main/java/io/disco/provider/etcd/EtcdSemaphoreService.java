package io.disco.provider.etcd;

import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * The Go disco semaphore behind {@link SemaphoreService}, with fenced slots.
 *
 * <p><b>Admission</b> (as Go's {@code provider/etcd/semaphore.go}): the holder key is
 * {@code <name>/<lease id in hex>}, created in a Txn that also counts {@code <name>/}; a holder
 * is admitted once at most {@code limit - 1} keys created before its own remain. Keys are only ever
 * created newest, so once a key is among the first {@code limit}, it stays there: at most
 * {@code limit} holders are admitted at any time. Go and Java holders share the queue and the count.
 *
 * <p><b>Several permits per lease.</b> One service holds one permit, but a session may have several
 * services on one name (one {@link HolderGroup} of the session): the first's key is {@code <name>/<lease id in hex>}
 * as above, a further one's {@code <name>/<lease id in hex>-<n>}. Each is one key directly under
 * {@code <name>/}, created by its own Txn at its own revision, so the argument above counts it as one
 * holder, for Go's admission as for this library's: {@code n} services of one lease take {@code n} of the
 * {@code limit} places, never more. Everything below is per holder key, so it holds for each of them.
 *
 * <p><b>Slots</b>, outside {@code <name>/} (Go never counts them): after admission a holder claims
 * slot {@code i} in {@code 0 .. limit-1} by writing the leased key
 * {@code disco-semaphore-slot:<name>/<i>} with the value {@code <holder key>@<its CreateRevision>},
 * in a Txn that requires its own key to be the incarnation that was admitted and the slot key to be
 * either absent or unchanged since a read that showed its recorded holder gone. The token is that
 * Txn's revision, which is the slot key's ModRevision afterwards.
 *
 * <p><b>Why it is safe.</b> (1) Unique slots: a slot key is written only by an admitted holder, and
 * only while it is absent or belongs to a holder key incarnation ({@code <key>@<CreateRevision>}) that
 * no longer exists; so no two current holders have one slot, even two holders of one lease, whose keys
 * differ. (2) A free slot exists: the slot keys of current holders number at most
 * {@code limit - 1} besides the claimer's, so among {@code limit} slots one is absent or stale.
 * (3) Tokens increase per slot: every claim is a write at a new revision. (4) A valid holder is never
 * rejected by its slot's guard: the mark of slot {@code i} rises above a holder's token only through
 * a later claim of {@code i}, which requires that holder's key to be gone, that is, its permit over.
 * (5) A zombie is rejected once its slot was claimed again. A release (and a close) deletes the slot
 * key in the Txn that deletes the holder key, guarded on the holder key being the permit's; a slot
 * key left behind (a crash, a holder key deleted by somebody else) is leased and is claimed again
 * once its holder key is gone.
 *
 * <p><b>Limit</b>: recorded once per name in the non-leased key {@code disco-semaphore-limit:<name>}
 * (created by the first service, compared by every later one); a service asking for another limit
 * fails at creation. Go's semaphore keeps no such record, so a Go program with another limit cannot
 * be detected.
 */
final class EtcdSemaphoreService extends EtcdService<Permit, SemaphoreLostException>
        implements SemaphoreService, HolderGroup.Holder {

    private static final int MAX_SLOT_ATTEMPTS = 20;

    private final int limit;
    private final String key;
    private final ByteSequence ownKey;
    private final KeyRange queue;
    private final KeyRange slots;

    private EtcdSemaphoreService(SessionCore session, String name, int limit, boolean ownsSession, int holder) {
        super(session, name, Primitive.SEMAPHORE, "semaphore", ownsSession);
        this.limit = limit;
        this.key = EtcdKeys.holder(name, session.leaseHex(), holder);
        this.ownKey = KeyRange.bytes(key);
        this.queue = KeyRange.prefix(EtcdKeys.queue(name));
        this.slots = KeyRange.prefix(EtcdKeys.slots(name));
    }

    static EtcdSemaphoreService create(SessionCore session, String name, int limit, boolean ownsSession) {
        validName(name);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        SessionThread.refuseOnSessionThread("creating a semaphore");
        ByteSequence marker = KeyRange.bytes(EtcdKeys.limitRecord(name));
        ByteSequence value = KeyRange.bytes(Integer.toString(limit));
        TxnResponse r = await(
                session,
                session.rpc(
                        "record of the semaphore limit",
                        () -> session.client()
                                .getKVClient()
                                .txn()
                                .If(new Cmp(marker, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(marker, value, PutOption.DEFAULT))
                                .Else(Op.get(marker, GetOption.DEFAULT))
                                .commit()),
                "record of the limit of semaphore " + name);
        if (!r.isSucceeded()) {
            String recorded =
                    r.getGetResponses().get(0).getKvs().get(0).getValue().toString(StandardCharsets.UTF_8);
            if (!recorded.equals(Integer.toString(limit))) {
                throw new IllegalArgumentException("semaphore " + name + " has limit " + recorded + " (recorded in "
                        + EtcdKeys.limitRecord(name) + "); this service asked for " + limit
                        + ": every service on one name must use one limit");
            }
        }
        return session.joinHolders(
                name, "semaphore", holder -> new EtcdSemaphoreService(session, name, limit, ownsSession, holder));
    }

    /** @return the holder key */
    @Override
    public ByteSequence ownKey() {
        return ownKey;
    }

    /** Closes, then frees its holder index for the session's next service on the name. */
    @Override
    public void close() {
        super.close();
        session.leaveHolders(this);
    }

    /**
     * Waits for the answer, at most the request timeout, and not interruptibly: the request is sent, and an
     * interrupt cannot unsend it (a limit record written while the caller gave up would be left behind, unseen). A
     * thread interrupted meanwhile keeps its status, for the acquisition that follows to act on.
     */
    private static <T> T await(SessionCore session, CompletableFuture<T> f, String what) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + session.requestTimeout().toNanos();
        try {
            while (true) {
                try {
                    return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (TimeoutException e) {
            throw new DiscoException(
                    "etcd could not be reached: no answer to the " + what + " within "
                            + session.requestTimeout().toMillis() + " ms",
                    e);
        } catch (ExecutionException e) {
            throw EtcdErrors.failure(what, e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---------------------------------------------------------------- SemaphoreService

    @Override
    public Permit acquire() throws InterruptedException {
        try {
            return acquire("semaphore.acquire()", null, UnaryOperator.identity(), () -> new SemaphoreClaim(false));
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Permit acquire(Duration timeout) throws InterruptedException, TimeoutException {
        return acquireWithin(
                "semaphore.acquire()",
                timeout,
                UnaryOperator.identity(),
                () -> new SemaphoreClaim(false),
                () -> new SemaphoreClaim(true));
    }

    @Override
    public Optional<Permit> tryAcquire() {
        return tryAcquire("semaphore.tryAcquire()", UnaryOperator.identity(), () -> new SemaphoreClaim(true));
    }

    @Override
    public CompletableFuture<Permit> acquireAsync() {
        return acquireAsync(UnaryOperator.identity(), () -> new SemaphoreClaim(false));
    }

    @Override
    public void release() {
        release("semaphore.release()", "release");
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        return releaseAsync("release");
    }

    /** A release deletes the permit's slot key with its holder key: while the holder key is its own, so is the slot. */
    @Override
    Op[] releaseOps(Permit held) {
        return new Op[] {Op.delete(slotKey(held.slot()), io.etcd.jetcd.options.DeleteOption.DEFAULT)};
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public Stat stat() {
        SessionThread.refuseOnSessionThread("semaphore.stat()");
        long count = await(
                        session,
                        session.rpc(
                                "count of the semaphore",
                                () -> session.client()
                                        .getKVClient()
                                        .get(
                                                queue.start(),
                                                GetOption.builder()
                                                        .withRange(queue.end())
                                                        .withCountOnly(true)
                                                        .build())),
                        "count of semaphore " + name)
                .getCount();
        return new Stat(limit, count);
    }

    @Override
    SemaphoreLostException lostException(String message, Throwable cause) {
        return new SemaphoreLostException(message, cause);
    }

    /** Deletes the permit's slot key if it is still this permit's claim (its ModRevision is the token). */
    private CompletableFuture<Void> deleteSlot(Permit p) {
        ByteSequence slotKey = slotKey(p.slot());
        return session.rpc(
                        "release of the slot",
                        () -> session.client()
                                .getKVClient()
                                .txn()
                                .If(new Cmp(
                                        slotKey,
                                        Cmp.Op.EQUAL,
                                        CmpTarget.modRevision(p.token().value())))
                                .Then(Op.delete(slotKey, io.etcd.jetcd.options.DeleteOption.DEFAULT))
                                .commit())
                .thenApply(r -> null);
    }

    private ByteSequence slotKey(int slot) {
        return KeyRange.bytes(EtcdKeys.slot(name, slot));
    }

    private final class SemaphoreClaim extends QueueClaim<Permit> {

        SemaphoreClaim(boolean tryOnly) {
            // The holder key's value is the claim's metadata (the Go semaphore never reads it).
            super(
                    EtcdSemaphoreService.this,
                    EtcdSemaphoreService.this.ownKey,
                    KeyRange.bytes(
                            EtcdSemaphoreService.this.session.claimMetadata().toJson()),
                    tryOnly);
        }

        @Override
        KeyRange waitRange() {
            return queue;
        }

        @Override
        int allowedAhead() {
            return limit - 1;
        }

        @Override
        CompletableFuture<Permit> grant(long myRevision, long revision) {
            CompletableFuture<Permit> out = new CompletableFuture<>();
            claimSlot(myRevision, 1, out);
            return out;
        }

        @Override
        void discarded(Permit permit) {
            deleteSlot(permit);
        }

        /** Reads holders and slots in one snapshot, then claims the first absent or stale slot. */
        private void claimSlot(long myRevision, int attempt, CompletableFuture<Permit> out) {
            session.rpc(
                            "read of the semaphore slots",
                            () -> session.client()
                                    .getKVClient()
                                    .txn()
                                    .Then(
                                            Op.get(
                                                    queue.start(),
                                                    GetOption.builder()
                                                            .withRange(queue.end())
                                                            .withKeysOnly(true)
                                                            .build()),
                                            Op.get(
                                                    slots.start(),
                                                    GetOption.builder()
                                                            .withRange(slots.end())
                                                            .build()))
                                    .commit())
                    .whenComplete((snapshot, e) -> {
                        if (e != null) {
                            out.completeExceptionally(e);
                            return;
                        }
                        Set<String> holders = new HashSet<>();
                        for (KeyValue kv : snapshot.getGetResponses().get(0).getKvs()) {
                            holders.add(kv.getKey().toString(StandardCharsets.UTF_8) + "@" + kv.getCreateRevision());
                        }
                        Map<Integer, KeyValue> taken = new HashMap<>();
                        for (KeyValue kv : snapshot.getGetResponses().get(1).getKvs()) {
                            String k = kv.getKey().toString(StandardCharsets.UTF_8);
                            try {
                                taken.put(Integer.parseInt(k.substring(k.lastIndexOf('/') + 1)), kv);
                            } catch (NumberFormatException ignored) {
                                // not a slot of this library
                            }
                        }
                        for (int slot = 0; slot < limit; slot++) {
                            KeyValue kv = taken.get(slot);
                            if (kv == null || !holders.contains(kv.getValue().toString(StandardCharsets.UTF_8))) {
                                trySlot(myRevision, slot, kv, attempt, out);
                                return;
                            }
                        }
                        retryOrFail(myRevision, attempt, out, "no free slot among " + limit);
                    });
        }

        private void trySlot(long myRevision, int slot, KeyValue seen, int attempt, CompletableFuture<Permit> out) {
            ByteSequence slotKey = slotKey(slot);
            Cmp slotUnchanged = seen == null
                    ? new Cmp(slotKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0))
                    : new Cmp(slotKey, Cmp.Op.EQUAL, CmpTarget.modRevision(seen.getModRevision()));
            ByteSequence value = KeyRange.bytes(key + "@" + myRevision);
            session.rpcOnce(
                            "claim of a semaphore slot",
                            () -> session.client()
                                    .getKVClient()
                                    .txn()
                                    .If(
                                            new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)),
                                            slotUnchanged)
                                    .Then(Op.put(
                                            slotKey,
                                            value,
                                            PutOption.builder()
                                                    .withLeaseId(session.leaseId())
                                                    .build()))
                                    .Else(Op.get(ownKey, GetOption.DEFAULT))
                                    .commit())
                    .whenComplete((r, e) -> {
                        if (e != null) {
                            out.completeExceptionally(e);
                        } else if (r.isSucceeded()) {
                            out.complete(new Permit(
                                    name,
                                    key,
                                    slot,
                                    FencingToken.of(r.getHeader().getRevision())));
                        } else if (r.getGetResponses().get(0).getKvs().isEmpty()
                                || r.getGetResponses().get(0).getKvs().get(0).getCreateRevision() != myRevision) {
                            out.completeExceptionally(lostException(
                                    "semaphore " + name + " lost while acquiring: its key " + key + " is gone", null));
                        } else {
                            retryOrFail(myRevision, attempt, out, "slot " + slot + " was claimed at the same instant");
                        }
                    });
        }

        private void retryOrFail(long myRevision, int attempt, CompletableFuture<Permit> out, String why) {
            if (attempt >= MAX_SLOT_ATTEMPTS) {
                out.completeExceptionally(new DiscoException(
                        "semaphore " + name + ": no slot claimed after " + attempt + " attempts (" + why + ")"));
                return;
            }
            session.schedule(
                    () -> claimSlot(myRevision, attempt + 1, out), Math.min(100, 5L * attempt), TimeUnit.MILLISECONDS);
        }
    }
}
