package io.disco.provider.etcd;

import io.disco.core.ClaimMetadata;
import io.disco.core.Primitive;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWGrant.Mode;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * etcd's {@code recipes.RWMutex} behind {@link RWLockService}, with fencing tokens.
 *
 * <h2>Keys</h2>
 * <ul>
 *   <li>a reader's key: {@code <name>/read/<lease id in hex>}; a writer's key:
 *       {@code <name>/write/<lease id in hex>}; both leased, one per (session, name) and mode;</li>
 *   <li>the phase marker {@code disco-rwlock-phase:<name>}: not leased, not a holder's key. It
 *       lies outside {@code <name>/}, because etcd's Go {@code recipes.RWMutex} writer (and the Go
 *       disco writer) waits for every key under {@code <name>/} created before its own, and a
 *       marker there, which no Go program deletes, would block it for ever; and outside every range
 *       {@code <name>/} of a reasonable lock name (the namespace {@code disco-rwlock-phase:} is
 *       nobody's lock name), so that no Mutex, Election or RWMutex of any name waits on it.</li>
 * </ul>
 *
 * <h2>Go recipes on the same name</h2>
 * etcd's Go {@code recipes.RWMutex} names its keys {@code <name>/read/<nanos>} and
 * {@code <name>/write/<nanos>} (a timestamp, not the lease id) and waits on the same ranges, by
 * CreateRevision: readers on {@code <name>/write/}, writers on all of {@code <name>/}. So Java
 * and Go owners exclude each other and keep one queue order. A Go writer does not touch the phase
 * marker: it carries no token of its own, and Java readers on both sides of it share one token.
 *
 * <h2>Admission</h2>
 * A reader is admitted when no writer key created before its own is left ({@code <name>/write/});
 * a writer when no key of either kind created before its own is left (the range
 * {@code [<name>/read/, end of <name>/write/)}). Both wait through {@link QueueClaim} and
 * {@link PredecessorWait}: the deletes of the keys ahead and of the own key in one watch (a reader watches
 * both ranges, so that its own key is in it), cleanup on every way of giving up. A reader that asks while a writer waits therefore queues behind it.
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
final class EtcdRWLockService extends EtcdService<RWGrant, RWLockLostException> implements RWLockService {

    private final String readKey;
    private final String writeKey;
    private final ByteSequence readOwnKey;
    private final ByteSequence writeOwnKey;
    private final ByteSequence phaseKey;
    private final KeyRange writers;
    private final KeyRange everyone;
    /** The writers queued behind the latest read grant, or null before the first. */
    private volatile QueuedWriters queuedWriters;

    private EtcdRWLockService(SessionCore session, String name, boolean ownsSession) {
        super(session, name, Primitive.RWLOCK, "read/write lock", ownsSession);
        this.readKey = leaseKey(name + "/read");
        this.writeKey = leaseKey(name + "/write");
        this.readOwnKey = KeyRange.bytes(readKey);
        this.writeOwnKey = KeyRange.bytes(writeKey);
        this.phaseKey = KeyRange.bytes(EtcdKeys.phaseMarker(name));
        this.writers = KeyRange.prefix(EtcdKeys.writers(name));
        this.everyone = new KeyRange(
                KeyRange.bytes(EtcdKeys.readers(name)),
                OptionsUtil.prefixEndOf(KeyRange.bytes(EtcdKeys.writers(name))));
    }

    static EtcdRWLockService create(SessionCore session, String name, boolean ownsSession) {
        return register(new EtcdRWLockService(session, name, ownsSession));
    }

    // ---------------------------------------------------------------- RWLockService

    @Override
    public RWGrant rLock() throws InterruptedException {
        return acquire(Mode.READ);
    }

    @Override
    public RWGrant rLock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquireWithin(
                "rwlock.rLock()",
                timeout,
                sameMode(Mode.READ),
                () -> new RWClaim(Mode.READ, false),
                () -> new RWClaim(Mode.READ, true));
    }

    @Override
    public Optional<RWGrant> tryRLock() {
        return tryAcquire("rwlock.tryRLock()", sameMode(Mode.READ), () -> new RWClaim(Mode.READ, true));
    }

    @Override
    public CompletableFuture<RWGrant> rLockAsync() {
        return acquireAsync(sameMode(Mode.READ), () -> new RWClaim(Mode.READ, false));
    }

    @Override
    public void rUnlock() {
        release("rwlock.rUnlock()", inMode(Mode.READ), notInMode(Mode.READ), "release of the read grant");
    }

    @Override
    public CompletableFuture<Void> rUnlockAsync() {
        return releaseAsync(inMode(Mode.READ), notInMode(Mode.READ), "release of the read grant");
    }

    @Override
    public RWGrant lock() throws InterruptedException {
        return acquire(Mode.WRITE);
    }

    @Override
    public RWGrant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquireWithin(
                "rwlock.lock()",
                timeout,
                sameMode(Mode.WRITE),
                () -> new RWClaim(Mode.WRITE, false),
                () -> new RWClaim(Mode.WRITE, true));
    }

    @Override
    public Optional<RWGrant> tryLock() {
        return tryAcquire("rwlock.tryLock()", sameMode(Mode.WRITE), () -> new RWClaim(Mode.WRITE, true));
    }

    @Override
    public CompletableFuture<RWGrant> lockAsync() {
        return acquireAsync(sameMode(Mode.WRITE), () -> new RWClaim(Mode.WRITE, false));
    }

    @Override
    public void unlock() {
        release("rwlock.unlock()", inMode(Mode.WRITE), notInMode(Mode.WRITE), "release of the write grant");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync(inMode(Mode.WRITE), notInMode(Mode.WRITE), "release of the write grant");
    }

    private RWGrant acquire(Mode mode) throws InterruptedException {
        try {
            return acquire(
                    mode == Mode.READ ? "rwlock.rLock()" : "rwlock.lock()",
                    null,
                    sameMode(mode),
                    () -> new RWClaim(mode, false));
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    /** Asking again for the held mode answers the held grant; the other mode is refused (no upgrade or downgrade). */
    private UnaryOperator<RWGrant> sameMode(Mode mode) {
        return held -> {
            if (held.mode() != mode) {
                throw new IllegalStateException("read/write lock " + name + ": this service holds a "
                        + held.mode().name().toLowerCase() + " grant and cannot also take a "
                        + mode.name().toLowerCase()
                        + " grant (no upgrade or downgrade); release it first");
            }
            return held;
        };
    }

    /** Releasing releases a grant of its own mode only. */
    private static Predicate<RWGrant> inMode(Mode mode) {
        return held -> held.mode() == mode;
    }

    /** Releasing refuses a grant of the other mode: nothing is released. */
    private Function<RWGrant, RuntimeException> notInMode(Mode mode) {
        return held -> new IllegalStateException("read/write lock " + name + ": this service holds a "
                + held.mode().name().toLowerCase() + " grant; " + (mode == Mode.READ ? "rUnlock()" : "unlock()")
                + " releases only a " + mode.name().toLowerCase() + " grant (nothing was released; use "
                + (mode == Mode.READ ? "unlock()" : "rUnlock()") + ")");
    }

    /** True once a writer key was created after the held read grant's own key (see {@link QueuedWriters}). */
    @Override
    public boolean writerWaiting() {
        QueuedWriters q = queuedWriters;
        return q != null
                && q.queued()
                && heldCreateRevision() == q.readerRevision
                && held().filter(g -> g.mode() == Mode.READ).isPresent();
    }

    /** A read grant of the own key created at {@code myRevision} is being made: watch for writers behind it. */
    private void watchWriters(long myRevision) {
        QueuedWriters before = queuedWriters;
        if (before != null && before.readerRevision == myRevision) {
            return;
        }
        queuedWriters = new QueuedWriters(session, writers, myRevision);
        if (before != null) {
            before.close();
        }
    }

    @Override
    void closing() {
        QueuedWriters q = queuedWriters;
        if (q != null) {
            q.close();
        }
    }

    @Override
    RWLockLostException lostException(String message, Throwable cause) {
        return new RWLockLostException(message, cause);
    }

    // ---------------------------------------------------------------- the acquisition

    private final class RWClaim extends QueueClaim<RWGrant> {

        private final Mode mode;
        private final ClaimMetadata metadata;

        RWClaim(Mode mode, boolean tryOnly) {
            this(mode, tryOnly, EtcdRWLockService.this.session.claimMetadata());
        }

        /** The own key's value is the claim's metadata (Go's RWMutex writes an empty value and never reads it). */
        private RWClaim(Mode mode, boolean tryOnly, ClaimMetadata metadata) {
            super(
                    EtcdRWLockService.this,
                    mode == Mode.READ ? readOwnKey : writeOwnKey,
                    KeyRange.bytes(metadata.toJson()),
                    tryOnly);
            this.mode = mode;
            this.metadata = metadata;
        }

        /** A reader waits for the writers before it; a writer for everyone before it. */
        @Override
        KeyRange waitRange() {
            return mode == Mode.READ ? writers : everyone;
        }

        /** Both modes' keys: a reader's own key is not among the writers it waits for. */
        @Override
        KeyRange watchRange() {
            return everyone;
        }

        @Override
        CompletableFuture<RWGrant> grant(long myRevision, long revision) {
            return mode == Mode.READ ? admitReader(myRevision) : admitWriter(myRevision);
        }

        /** Joins (or opens) the current read phase: the token is the phase marker's CreateRevision. */
        private CompletableFuture<RWGrant> admitReader(long myRevision) {
            watchWriters(myRevision);
            return session.rpc(
                            "read phase Txn",
                            () -> session.client()
                                    .getKVClient()
                                    .txn()
                                    .If(
                                            new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)),
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
                            throw new DiscoException("read/write lock " + name + ": the read phase Txn found neither"
                                    + " a missing own key nor a phase marker (unexpected etcd answer)");
                        }
                        return grantOf(phase.get(0).getCreateRevision());
                    });
        }

        /**
         * Ends the current read phase: the token is the revision of the Txn that deletes the marker,
         * which etcd keeps nowhere: it is recorded in the own key's value, in the background, for the
         * listing of claimants.
         */
        private CompletableFuture<RWGrant> admitWriter(long myRevision) {
            return session.rpc(
                            "write admission Txn",
                            () -> session.client()
                                    .getKVClient()
                                    .txn()
                                    .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(myRevision)))
                                    .Then(Op.delete(phaseKey, DeleteOption.DEFAULT))
                                    .Else(Op.get(ownKey, GetOption.DEFAULT))
                                    .commit())
                    .thenApply(r -> {
                        if (!r.isSucceeded()) {
                            checkOwnKey(r.getGetResponses().get(0), myRevision);
                            throw new DiscoException("read/write lock " + name + ": the write admission Txn failed"
                                    + " although the own key is there (unexpected etcd answer)");
                        }
                        // No TokenRecord here: a Put moves the key's ModRevision, and etcd's Go RWMutex finds
                        // the writer that blocks a reader with WithMaxModRev: a Go reader would pass a held writer.
                        return grantOf(r.getHeader().getRevision());
                    });
        }

        private void checkOwnKey(GetResponse own, long myRevision) {
            if (own.getKvs().isEmpty() || own.getKvs().get(0).getCreateRevision() != myRevision) {
                session.probeLease();
                throw lostException(kind + " " + name + " lost while acquiring: own key " + ownKey + " is gone", null);
            }
        }

        private RWGrant grantOf(long token) {
            return new RWGrant(mode == Mode.READ ? readKey : writeKey, mode, FencingToken.of(token));
        }
    }
}
