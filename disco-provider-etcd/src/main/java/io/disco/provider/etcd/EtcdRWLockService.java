package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWGrant.Mode;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * etcd's {@code recipes.RWMutex} behind {@link RWLockService}, with fencing tokens.
 *
 * <h2>Keys</h2>
 * <ul>
 *   <li>a reader's key: {@code <prefix>/read/<lease id in hex>}; a writer's key:
 *       {@code <prefix>/write/<lease id in hex>}; both leased, one per (session, prefix) and mode;</li>
 *   <li>the phase marker {@code <prefix>/phase}: not leased, not a holder's key; it sorts before
 *       {@code <prefix>/read/}, so it lies outside every wait range.</li>
 * </ul>
 *
 * <h2>Admission</h2>
 * A reader is admitted when no writer key created before its own is left ({@code <prefix>/write/});
 * a writer when no key of either kind created before its own is left (the range
 * {@code [<prefix>/read/, end of <prefix>/write/)}). Both wait through {@link QueueClaim} and
 * {@link PredecessorWait}: the newest predecessor only, re-read of the own key afterwards, cleanup
 * on every way of giving up. A reader that asks while a writer waits therefore queues behind it.
 *
 * <h2>Tokens</h2>
 * After admission, one more Txn, guarded by the own key still existing with its CreateRevision:
 * <ul>
 *   <li>a writer deletes the phase marker; its token W is that Txn's header revision;</li>
 *   <li>a reader creates the phase marker if absent; its token is the marker's CreateRevision P
 *       (the one created now, or the one another reader of the same phase created).</li>
 * </ul>
 * Why this orders tokens (every step below is a linearizable etcd operation):
 * <ol>
 *   <li>An admission Txn succeeds only while its own key exists; a writer is admitted only after it
 *       has read that every key created before its own is gone, and a key is gone only once deleted,
 *       which is a write. So every earlier reader's marker Txn, and every earlier writer's admission
 *       Txn, committed at a revision strictly below that deletion, hence strictly below W. In
 *       particular W exceeds the previous writer's token and the previous phase's P.</li>
 *   <li>While a writer's key exists, no reader created after it is admitted (it waits for that key),
 *       and no reader created before it can still commit a marker Txn after the writer's admission
 *       (the writer waited for that reader's key to be gone, and the marker Txn is guarded on it).
 *       So after W deleted the marker, it is recreated only by a reader admitted after the writer's
 *       key was deleted: at a revision strictly above that deletion, hence above W.</li>
 *   <li>Only a writer's admission deletes the marker. Between two consecutive admitted writers, the
 *       first reader to commit creates it, and every later reader of that interval reads the same
 *       one: they all hold the same token P, with W(previous) &lt; P &lt; W(next).</li>
 * </ol>
 * A writer whose admission Txn committed but which then gave up (cancelled at that instant, or the
 * answer was lost) has still deleted the marker: it ends the phase like a writer that wrote nothing.
 * That keeps the order above; it only means the readers after it get a new, higher token.
 */
final class EtcdRWLockService implements RWLockService, EtcdSession.Member {

    private final EtcdSession session;
    private final String prefix;
    private final String readKey;
    private final String writeKey;
    private final ByteSequence readOwnKey;
    private final ByteSequence writeOwnKey;
    private final ByteSequence phaseKey;
    private final KeyRange writers;
    private final KeyRange everyone;
    private final boolean ownsSession;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    // Guarded by this.
    private RWGrant held;
    private long heldCreateRevision;
    private RWClaim pending;
    private boolean closed;
    private RWLockLostException lost;

    private EtcdRWLockService(EtcdSession session, String prefix, boolean ownsSession) {
        this.session = session;
        this.prefix = prefix;
        String lease = EtcdSession.hex(session.leaseId());
        this.readKey = prefix + "/read/" + lease;
        this.writeKey = prefix + "/write/" + lease;
        this.readOwnKey = KeyRange.bytes(readKey);
        this.writeOwnKey = KeyRange.bytes(writeKey);
        this.phaseKey = KeyRange.bytes(phaseKey(prefix));
        this.writers = KeyRange.prefix(prefix + "/write/");
        this.everyone = new KeyRange(KeyRange.bytes(prefix + "/read/"), OptionsUtil.prefixEndOf(KeyRange.bytes(prefix + "/write/")));
        this.ownsSession = ownsSession;
    }

    static EtcdRWLockService create(EtcdSession session, String prefix, boolean ownsSession) {
        Objects.requireNonNull(session, "session");
        EtcdRWLockService svc = new EtcdRWLockService(session, EtcdLockService.validPrefix(prefix), ownsSession);
        session.register(svc.prefix, svc);
        return svc;
    }

    /** The non-leased phase marker of the read/write lock {@code prefix}; not a holder's key. */
    static String phaseKey(String prefix) {
        return prefix + "/phase";
    }

    // ---------------------------------------------------------------- RWLockService

    @Override
    public RWGrant rLock() throws InterruptedException {
        return acquire(Mode.READ);
    }

    @Override
    public RWGrant rLock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(Mode.READ, timeout);
    }

    @Override
    public Optional<RWGrant> tryRLock() {
        return tryAcquire(Mode.READ);
    }

    @Override
    public CompletableFuture<RWGrant> rLockAsync() {
        return acquireAsync(Mode.READ);
    }

    @Override
    public void rUnlock() {
        release(Mode.READ);
    }

    @Override
    public RWGrant lock() throws InterruptedException {
        return acquire(Mode.WRITE);
    }

    @Override
    public RWGrant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(Mode.WRITE, timeout);
    }

    @Override
    public Optional<RWGrant> tryLock() {
        return tryAcquire(Mode.WRITE);
    }

    @Override
    public CompletableFuture<RWGrant> lockAsync() {
        return acquireAsync(Mode.WRITE);
    }

    @Override
    public void unlock() {
        release(Mode.WRITE);
    }

    private RWGrant acquire(Mode mode) throws InterruptedException {
        try {
            return acquire(mode, null);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    private RWGrant acquire(Mode mode, Duration timeout) throws InterruptedException, TimeoutException {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Object claim = begin(mode, false);
        return claim instanceof RWGrant ? (RWGrant) claim : ((RWClaim) claim).await(timeout);
    }

    private Optional<RWGrant> tryAcquire(Mode mode) {
        Object claim = begin(mode, true);
        return Optional.ofNullable(claim instanceof RWGrant ? (RWGrant) claim : ((RWClaim) claim).join());
    }

    private CompletableFuture<RWGrant> acquireAsync(Mode mode) {
        Object claim = begin(mode, false);
        return claim instanceof RWGrant ? CompletableFuture.completedFuture((RWGrant) claim) : ((RWClaim) claim).result;
    }

    /** @return the held grant of {@code mode}, or a started claim */
    private Object begin(Mode mode, boolean tryOnly) {
        RWClaim claim;
        synchronized (this) {
            checkUsable();
            if (held != null) {
                if (held.mode() == mode) {
                    return held;
                }
                throw new IllegalStateException("read/write lock " + prefix + ": this service holds a "
                        + held.mode().name().toLowerCase() + " grant and cannot also take a " + mode.name().toLowerCase()
                        + " grant (no upgrade or downgrade); release it first");
            }
            if (pending != null) {
                throw new IllegalStateException("read/write lock " + prefix + ": another acquisition of this service is in"
                        + " progress; one service is one owner (use one service per concurrent owner)");
            }
            claim = new RWClaim(mode, tryOnly);
            pending = claim;
        }
        claim.start();
        return claim;
    }

    private void checkUsable() {
        if (lost != null) {
            throw new RWLockLostException("read/write lock " + prefix + " is unusable: " + lost.getMessage(), lost);
        }
        if (closed) {
            throw new IllegalStateException("read/write lock service " + prefix + " is closed");
        }
    }

    private void release(Mode mode) {
        RWGrant g;
        long rev;
        synchronized (this) {
            g = held;
            rev = heldCreateRevision;
            if (g != null && g.mode() != mode) {
                throw new IllegalStateException("read/write lock " + prefix + ": this service holds a "
                        + g.mode().name().toLowerCase() + " grant; " + (mode == Mode.READ ? "rUnlock()" : "unlock()")
                        + " releases only a " + mode.name().toLowerCase() + " grant (nothing was released; use "
                        + (mode == Mode.READ ? "unlock()" : "rUnlock()") + ")");
            }
        }
        if (g == null) {
            return;
        }
        String what = "release of the " + mode.name().toLowerCase() + " grant of " + prefix;
        try {
            QueueClaim.guardedDelete(session, ownKey(mode), rev).get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted during the " + what + "; still held, retry", e);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the " + what + " within "
                    + session.requestTimeout().toMillis() + " ms; still held, retry", e);
        } catch (ExecutionException e) {
            throw EtcdSession.failure(what, e.getCause());
        }
        synchronized (this) {
            if (held == g) {
                held = null;
            }
        }
    }

    private ByteSequence ownKey(Mode mode) {
        return mode == Mode.READ ? readOwnKey : writeOwnKey;
    }

    @Override
    public synchronized Optional<RWGrant> held() {
        return Optional.ofNullable(held);
    }

    @Override
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    @Override
    public synchronized Optional<RWLockLostException> err() {
        return Optional.ofNullable(lost);
    }

    @Override
    public void close() {
        RWClaim claim;
        RWGrant g;
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
            session.close(); // revokes the lease: the keys go with it
        } else {
            if (claim != null) {
                claim.abandon(new IllegalStateException("read/write lock service " + prefix + " closed"));
            }
            if (g != null) {
                try {
                    QueueClaim.deleteOwnKey(session, ownKey(g.mode()), rev)
                            .get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
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
        return "EtcdRWLockService{prefix=" + prefix + ", lease=" + EtcdSession.hex(session.leaseId()) + '}';
    }

    // ---------------------------------------------------------------- session events (session thread)

    @Override
    public void sessionLost(DiscoException cause) {
        RWClaim claim;
        synchronized (this) {
            lost = new RWLockLostException("read/write lock " + prefix + " lost: " + cause.getMessage(), cause);
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
        RWClaim claim;
        synchronized (this) {
            closed = true;
            held = null;
            claim = pending;
        }
        if (claim != null) {
            claim.giveUp(new IllegalStateException("read/write lock service " + prefix + " closed: its session was closed"));
        }
        finish();
    }

    private void finish() {
        ForkJoinPool.commonPool().execute(() -> done.complete(null));
    }

    // ---------------------------------------------------------------- the acquisition

    private final class RWClaim extends QueueClaim<RWGrant> {

        private final Mode mode;

        RWClaim(Mode mode, boolean tryOnly) {
            super(EtcdRWLockService.this.session, ownKey(mode), tryOnly, EtcdRWLockService.this);
            this.mode = mode;
        }

        /**
         * One Txn: create the own key if absent, and read the first-created key of the wait range
         * (writers for a reader; readers and writers for a writer). Nobody is ahead when that range is
         * empty or its first key was created no earlier than the own key. jetcd lists only the Get
         * results: the first-created key is at index 0 in the Then branch, at index 1 in the Else
         * branch (after the own key).
         */
        @Override
        CompletableFuture<Created> create() {
            KeyRange range = waitRange();
            GetOption firstCreated = GetOption.builder()
                    .withRange(range.end())
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND)
                    .withLimit(1)
                    .build();
            Op getFirst = Op.get(range.start(), firstCreated);
            return session.rpc(mode.name().toLowerCase() + " lock acquire Txn", () -> session.client().getKVClient().txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(ownKey, ByteSequence.EMPTY, PutOption.builder().withLeaseId(session.leaseId()).build()), getFirst)
                            .Else(Op.get(ownKey, GetOption.DEFAULT), getFirst)
                            .commit())
                    .thenApply(EtcdRWLockService::created);
        }

        @Override
        KeyRange waitRange() {
            return mode == Mode.READ ? writers : everyone;
        }

        @Override
        CompletableFuture<RWGrant> grant(long myRevision, long revision) {
            return mode == Mode.READ ? admitReader(myRevision) : admitWriter(myRevision);
        }

        /** Joins (or opens) the current read phase: the token is the phase marker's CreateRevision. */
        private CompletableFuture<RWGrant> admitReader(long myRevision) {
            return session.rpc("read phase Txn", () -> session.client().getKVClient().txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)),
                                new Cmp(phaseKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(phaseKey, ByteSequence.EMPTY, PutOption.DEFAULT))
                            .Else(Op.get(ownKey, GetOption.DEFAULT), Op.get(phaseKey, GetOption.DEFAULT))
                            .commit())
                    .thenApply(r -> {
                        if (r.isSucceeded()) {
                            // The marker was created by this Txn: its CreateRevision is the Txn's revision.
                            return grantOf(r.getHeader().getRevision());
                        }
                        // Else branch: only the two Gets are listed (rule 1): own key at 0, marker at 1.
                        List<GetResponse> gets = r.getGetResponses();
                        checkOwnKey(gets.get(0), myRevision);
                        List<KeyValue> phase = gets.get(1).getKvs();
                        if (phase.isEmpty()) {
                            throw new DiscoException("read/write lock " + prefix + ": the read phase Txn found neither"
                                    + " a missing own key nor a phase marker (unexpected etcd answer)");
                        }
                        return grantOf(phase.get(0).getCreateRevision());
                    });
        }

        /** Ends the current read phase: the token is the revision of the Txn that deletes the marker. */
        private CompletableFuture<RWGrant> admitWriter(long myRevision) {
            return session.rpc("write admission Txn", () -> session.client().getKVClient().txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)))
                            .Then(Op.delete(phaseKey, DeleteOption.DEFAULT))
                            .Else(Op.get(ownKey, GetOption.DEFAULT))
                            .commit())
                    .thenApply(r -> {
                        if (!r.isSucceeded()) {
                            checkOwnKey(r.getGetResponses().get(0), myRevision);
                            throw new DiscoException("read/write lock " + prefix + ": the write admission Txn failed"
                                    + " although the own key is there (unexpected etcd answer)");
                        }
                        return grantOf(r.getHeader().getRevision());
                    });
        }

        private void checkOwnKey(GetResponse own, long myRevision) {
            if (own.getKvs().isEmpty() || own.getKvs().get(0).getCreateRevision() != myRevision) {
                session.probeLease();
                throw lost(new PredecessorWait.OwnKeyDeletedException(ownKey));
            }
        }

        private RWGrant grantOf(long token) {
            return new RWGrant(mode == Mode.READ ? readKey : writeKey, mode, FencingToken.of(token));
        }

        @Override
        void commit(RWGrant grant, long myRevision) {
            held = grant;
            heldCreateRevision = myRevision;
            pending = null;
        }

        @Override
        void ended() {
            synchronized (EtcdRWLockService.this) {
                if (pending == this) {
                    pending = null;
                }
            }
        }

        @Override
        RWLockLostException lost(DiscoException cause) {
            return new RWLockLostException("read/write lock " + prefix + " lost while acquiring a "
                    + mode.name().toLowerCase() + " grant: " + cause.getMessage(), cause);
        }
    }

    static QueueClaim.Created created(TxnResponse r) {
        long myRevision;
        GetResponse first;
        if (r.isSucceeded()) {
            myRevision = r.getHeader().getRevision();
            first = r.getGetResponses().get(0);
        } else {
            myRevision = r.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
            first = r.getGetResponses().get(1);
        }
        boolean someoneAhead = !first.getKvs().isEmpty() && first.getKvs().get(0).getCreateRevision() < myRevision;
        return new QueueClaim.Created(myRevision, someoneAhead, r.getHeader().getRevision());
    }
}
