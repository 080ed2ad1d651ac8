package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * etcd's {@code concurrency.Mutex} behind {@link LockService}: the own key is
 * {@code <prefix>/<lease id in hex>}; the owner is the key with the lowest CreateRevision under
 * {@code <prefix>/}; the fencing token is the cluster revision at which ownership was established.
 */
final class EtcdLockService implements LockService, EtcdSession.Member {

    private final EtcdSession session;
    private final String prefix;
    private final String key;
    private final ByteSequence ownKey;
    private final KeyRange queue;
    private final boolean ownsSession;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    // Guarded by this.
    private Grant held;
    private long heldCreateRevision;
    private LockClaim pending;
    private boolean closed;
    private LockLostException lost;

    private EtcdLockService(EtcdSession session, String prefix, boolean ownsSession) {
        this.session = session;
        this.prefix = prefix;
        this.key = prefix + "/" + EtcdSession.hex(session.leaseId());
        this.ownKey = KeyRange.bytes(key);
        this.queue = KeyRange.prefix(prefix + "/");
        this.ownsSession = ownsSession;
    }

    static EtcdLockService create(EtcdSession session, String prefix, boolean ownsSession) {
        Objects.requireNonNull(session, "session");
        EtcdLockService svc = new EtcdLockService(session, validPrefix(prefix), ownsSession);
        session.register(svc.prefix, svc);
        return svc;
    }

    static String validPrefix(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null");
        }
        if (prefix.isBlank()) {
            throw new IllegalArgumentException("prefix must not be blank, got '" + prefix + "'");
        }
        return prefix;
    }

    // ---------------------------------------------------------------- LockService

    @Override
    public Grant lock() throws InterruptedException {
        try {
            return lock(null);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Grant lock(Duration timeout) throws InterruptedException, TimeoutException {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Object claim = begin(false);
        return claim instanceof Grant ? (Grant) claim : ((LockClaim) claim).await(timeout);
    }

    @Override
    public Optional<Grant> tryLock() {
        Object claim = begin(true);
        return Optional.ofNullable(claim instanceof Grant ? (Grant) claim : ((LockClaim) claim).join());
    }

    @Override
    public CompletableFuture<Grant> lockAsync() {
        Object claim = begin(false);
        return claim instanceof Grant ? CompletableFuture.completedFuture((Grant) claim) : ((LockClaim) claim).result;
    }

    /** @return the held grant, or a started claim */
    private Object begin(boolean tryOnly) {
        LockClaim claim;
        synchronized (this) {
            checkUsable();
            if (held != null) {
                return held;
            }
            if (pending != null) {
                throw new IllegalStateException("lock " + prefix + ": another acquisition of this service is in progress;"
                        + " one service is one owner (use one service per concurrent owner)");
            }
            claim = new LockClaim(tryOnly);
            pending = claim;
        }
        claim.start();
        return claim;
    }

    private void checkUsable() {
        if (lost != null) {
            throw new LockLostException("lock " + prefix + " is unusable: " + lost.getMessage(), lost);
        }
        if (closed) {
            throw new IllegalStateException("lock service " + prefix + " is closed");
        }
    }

    @Override
    public void unlock() {
        Grant g;
        long rev;
        synchronized (this) {
            g = held;
            rev = heldCreateRevision;
        }
        if (g == null) {
            return;
        }
        try {
            QueueClaim.guardedDelete(session, ownKey, rev).get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while releasing lock " + prefix + "; still held, retry unlock()", e);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the release of lock " + prefix + " within "
                    + session.requestTimeout().toMillis() + " ms; still held, retry unlock()", e);
        } catch (ExecutionException e) {
            throw EtcdSession.failure("release of lock " + prefix, e.getCause());
        }
        synchronized (this) {
            if (held == g) {
                held = null;
            }
        }
    }

    @Override
    public synchronized Optional<Grant> held() {
        return Optional.ofNullable(held);
    }

    @Override
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    @Override
    public synchronized Optional<LockLostException> err() {
        return Optional.ofNullable(lost);
    }

    @Override
    public void close() {
        LockClaim claim;
        Grant g;
        long rev;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            claim = pending;
            g = held;
            rev = heldCreateRevision;
            held = null;
        }
        if (ownsSession) {
            session.close(); // revokes the lease: the key goes with it
        } else {
            if (claim != null) {
                claim.abandon(new IllegalStateException("lock service " + prefix + " closed"));
            }
            if (g != null) {
                try {
                    QueueClaim.deleteOwnKey(session, ownKey, rev).get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException e) {
                    // deleteOwnKey keeps retrying in the background
                }
            }
        }
        session.unregister(prefix, this);
        finish();
    }

    @Override
    public String toString() {
        return "EtcdLockService{key=" + key + '}';
    }

    // ---------------------------------------------------------------- session events (session thread)

    @Override
    public void sessionLost(DiscoException cause) {
        LockClaim claim;
        synchronized (this) {
            lost = new LockLostException("lock " + prefix + " lost: " + cause.getMessage(), cause);
            held = null;
            claim = pending;
        }
        if (claim != null) {
            claim.giveUp(lost);
        }
        finish();
    }

    @Override
    public void sessionClosed() {
        LockClaim claim;
        synchronized (this) {
            closed = true;
            held = null;
            claim = pending;
        }
        if (claim != null) {
            claim.giveUp(new IllegalStateException("lock service " + prefix + " closed: its session was closed"));
        }
        finish();
    }

    private void finish() {
        ForkJoinPool.commonPool().execute(() -> done.complete(null));
    }

    // ---------------------------------------------------------------- the acquisition

    private final class LockClaim extends QueueClaim<Grant> {

        LockClaim(boolean tryOnly) {
            super(EtcdLockService.this.session, EtcdLockService.this.ownKey, tryOnly, EtcdLockService.this);
        }

        /**
         * One Txn: create the own key if absent, and read the current owner (lowest CreateRevision).
         * jetcd lists only the Get results: the owner is at index 0 in the Then branch and at index 1
         * in the Else branch, after the own key (a straight port of Go's {@code Responses[1]} is wrong).
         */
        @Override
        CompletableFuture<Created> create() {
            GetOption firstCreated = GetOption.builder()
                    .isPrefix(true)
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND)
                    .withLimit(1)
                    .build();
            Op getOwner = Op.get(queue.start(), firstCreated);
            return session.rpc("lock acquire Txn", () -> session.client().getKVClient().txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(ownKey, ByteSequence.EMPTY, PutOption.builder().withLeaseId(session.leaseId()).build()), getOwner)
                            .Else(Op.get(ownKey, GetOption.DEFAULT), getOwner)
                            .commit())
                    .thenApply(EtcdLockService::created);
        }

        @Override
        KeyRange waitRange() {
            return queue;
        }

        @Override
        CompletableFuture<Grant> grant(long myRevision, long revision) {
            return CompletableFuture.completedFuture(new Grant(key, FencingToken.of(revision)));
        }

        @Override
        void commit(Grant grant, long myRevision) {
            held = grant;
            heldCreateRevision = myRevision;
            pending = null;
        }

        @Override
        void ended() {
            synchronized (EtcdLockService.this) {
                if (pending == this) {
                    pending = null;
                }
            }
        }

        @Override
        DiscoException lost(DiscoException cause) {
            return new LockLostException("lock " + prefix + " lost while waiting: " + cause.getMessage(), cause);
        }
    }

    static QueueClaim.Created created(TxnResponse r) {
        long myRevision;
        io.etcd.jetcd.kv.GetResponse owner;
        if (r.isSucceeded()) {
            myRevision = r.getHeader().getRevision();
            owner = r.getGetResponses().get(0);
        } else {
            myRevision = r.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
            owner = r.getGetResponses().get(1);
        }
        boolean mine = owner.getKvs().isEmpty() || owner.getKvs().get(0).getCreateRevision() == myRevision;
        return new QueueClaim.Created(myRevision, !mine, r.getHeader().getRevision());
    }
}
