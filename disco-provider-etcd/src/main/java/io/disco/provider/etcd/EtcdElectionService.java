package io.disco.provider.etcd;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * etcd's {@code concurrency.Election} behind {@link ElectionService}: the candidate key is
 * {@code <prefix>/<lease id in hex>} with the candidate's value; the leader is the key with the lowest
 * CreateRevision under {@code <prefix>/}; the fencing token of a term is the CreateRevision of the
 * winning key, unchanged by {@code proclaim}. Campaigning reuses the lock's acquire state machine
 * ({@link QueueClaim}: create Txn, wait for the newest predecessor, linearizable re-read, cleanup on
 * every way of giving up).
 */
final class EtcdElectionService implements ElectionService, EtcdSession.Member {

    private final EtcdSession session;
    private final String prefix;
    private final String key;
    private final ByteSequence ownKey;
    private final KeyRange candidates;
    private final boolean ownsSession;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    // Guarded by this.
    private Leadership held;
    private long heldCreateRevision;
    private ElectionClaim pending;
    private boolean closed;
    private LeadershipLostException lost;
    private final List<EtcdObservation> observations = new ArrayList<>();

    private EtcdElectionService(EtcdSession session, String prefix, boolean ownsSession) {
        this.session = session;
        this.prefix = prefix;
        this.key = prefix + "/" + EtcdSession.hex(session.leaseId());
        this.ownKey = KeyRange.bytes(key);
        this.candidates = KeyRange.prefix(prefix + "/");
        this.ownsSession = ownsSession;
    }

    static EtcdElectionService create(EtcdSession session, String prefix, boolean ownsSession) {
        Objects.requireNonNull(session, "session");
        EtcdElectionService svc = new EtcdElectionService(session, EtcdLockService.validPrefix(prefix), ownsSession);
        session.register(svc.prefix, svc);
        return svc;
    }

    // ---------------------------------------------------------------- campaign

    @Override
    public Leadership campaign(String value) throws InterruptedException {
        try {
            return campaign(value, null);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Object claim = begin(validValue(value));
        if (claim instanceof Leadership) {
            Leadership l = (Leadership) claim;
            return l.value().equals(value) ? l : proclaim(value);
        }
        return ((ElectionClaim) claim).await(timeout);
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        Object claim = begin(validValue(value));
        if (claim instanceof Leadership) {
            Leadership l = (Leadership) claim;
            return l.value().equals(value) ? CompletableFuture.completedFuture(l) : proclaimAsync(value);
        }
        return ((ElectionClaim) claim).result;
    }

    private static String validValue(String value) {
        if (value == null) {
            throw new IllegalArgumentException("value must not be null");
        }
        return value;
    }

    /** @return the held leadership, or a started claim */
    private Object begin(String value) {
        ElectionClaim claim;
        synchronized (this) {
            checkUsable();
            if (held != null) {
                return held;
            }
            if (pending != null) {
                throw new IllegalStateException("election " + prefix + ": another campaign of this service is in progress;"
                        + " one service is one candidate (use one session and service per candidate)");
            }
            claim = new ElectionClaim(value);
            pending = claim;
        }
        claim.start();
        return claim;
    }

    private void checkUsable() {
        if (lost != null) {
            throw new LeadershipLostException("election " + prefix + " is unusable: " + lost.getMessage(), lost);
        }
        checkOpen();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("election service " + prefix + " is closed");
        }
    }

    // ---------------------------------------------------------------- proclaim, resign

    @Override
    public Leadership proclaim(String value) {
        return awaitRpc(proclaimAsync(validValue(value)), "proclamation");
    }

    /** Go's {@code Proclaim}: Put the own key with the new value, only while it is still the key that won. */
    private CompletableFuture<Leadership> proclaimAsync(String value) {
        Leadership l;
        long rev;
        synchronized (this) {
            l = held;
            rev = heldCreateRevision;
        }
        if (l == null) {
            return CompletableFuture.failedFuture(new NotLeaderException("election " + prefix + ": " + key
                    + " is not the leader; only the leader can proclaim"));
        }
        return session.rpc("proclamation", () -> session.client().getKVClient().txn()
                        .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(rev)))
                        .Then(Op.put(ownKey, KeyRange.bytes(value), PutOption.builder().withLeaseId(session.leaseId()).build()))
                        .commit())
                .thenApply((TxnResponse r) -> {
                    synchronized (this) {
                        boolean sameTerm = held != null && held.token().equals(l.token());
                        if (!r.isSucceeded()) {
                            // Our key is gone (lease expired or revoked, or deleted by hand): the term is over.
                            if (sameTerm) {
                                held = null;
                            }
                            session.probeLease();
                            throw new NotLeaderException("election " + prefix + ": " + key
                                    + " is no longer the leader (its key is gone); the term with token " + l.token() + " has ended");
                        }
                        Leadership proclaimed = l.withValue(value);
                        if (sameTerm) {
                            held = proclaimed;
                        }
                        return proclaimed;
                    }
                });
    }

    @Override
    public void resign() {
        Leadership l;
        long rev;
        synchronized (this) {
            l = held;
            rev = heldCreateRevision;
        }
        if (l == null) {
            return;
        }
        // Deleting only while CreateRevision == ours: never someone else's key, and a retry is harmless.
        awaitRpc(session.rpc("resignation", () -> QueueClaim.guardedDelete(session, ownKey, rev)), "resignation");
        synchronized (this) {
            if (held != null && held.token().equals(l.token())) {
                held = null;
            }
        }
    }

    /** Waits for an RPC issued through {@link EtcdSession#rpc} (which bounds it by the request timeout). */
    private <T> T awaitRpc(CompletableFuture<T> f, String what) {
        try {
            return f.get(2 * session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted during the " + what + " in election " + prefix
                    + "; its outcome is unknown, retry", e);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the " + what + " in election " + prefix, e);
        } catch (ExecutionException e) {
            throw QueueClaim.unchecked(EtcdSession.unwrap(e.getCause()));
        }
    }

    // ---------------------------------------------------------------- leader, observe

    @Override
    public Optional<Leadership> leader() {
        synchronized (this) {
            checkOpen();
        }
        GetOption firstCreated = GetOption.builder()
                .withRange(candidates.end())
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withLimit(1)
                .build();
        GetResponse r = awaitRpc(session.rpc("read of the leader",
                () -> session.client().getKVClient().get(candidates.start(), firstCreated)), "read of the leader");
        return r.getKvs().isEmpty() ? Optional.empty() : Optional.of(leadership(r.getKvs().get(0)));
    }

    static Leadership leadership(KeyValue kv) {
        return new Leadership(kv.getKey().toString(StandardCharsets.UTF_8), kv.getValue().toString(StandardCharsets.UTF_8),
                FencingToken.of(kv.getCreateRevision()));
    }

    @Override
    public synchronized Optional<Leadership> held() {
        return Optional.ofNullable(held);
    }

    @Override
    public Observation observe(Consumer<Leadership> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        EtcdObservation obs;
        synchronized (this) {
            checkOpen();
            obs = new EtcdObservation(session.client(), prefix, candidates, session.requestTimeout(), listener, this::forget);
            observations.add(obs);
        }
        return obs.start();
    }

    private synchronized void forget(EtcdObservation obs) {
        observations.remove(obs);
    }

    // ---------------------------------------------------------------- lifetime

    @Override
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    @Override
    public synchronized Optional<LeadershipLostException> err() {
        return Optional.ofNullable(lost);
    }

    @Override
    public void close() {
        ElectionClaim claim;
        Leadership l;
        long rev;
        List<EtcdObservation> obs;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            claim = pending;
            l = held;
            rev = heldCreateRevision;
            held = null;
            obs = new ArrayList<>(observations);
        }
        for (EtcdObservation o : obs) {
            o.close();
        }
        if (ownsSession) {
            session.close(); // revokes the lease: the key goes with it
        } else {
            if (claim != null) {
                claim.abandon(new IllegalStateException("election service " + prefix + " closed"));
            }
            if (l != null) {
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
        return "EtcdElectionService{key=" + key + '}';
    }

    // ---------------------------------------------------------------- session events (session thread)

    @Override
    public void sessionLost(DiscoException cause) {
        ElectionClaim claim;
        synchronized (this) {
            lost = new LeadershipLostException("election " + prefix + ": leadership lost: " + cause.getMessage(), cause);
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
        ElectionClaim claim;
        List<EtcdObservation> obs;
        synchronized (this) {
            closed = true;
            held = null;
            claim = pending;
            obs = new ArrayList<>(observations);
        }
        if (claim != null) {
            claim.giveUp(new IllegalStateException("election service " + prefix + " closed: its session was closed"));
        }
        for (EtcdObservation o : obs) {
            o.stop(); // never wait for a listener on the session thread
        }
        finish();
    }

    private void finish() {
        ForkJoinPool.commonPool().execute(() -> done.complete(null));
    }

    // ---------------------------------------------------------------- the campaign

    private final class ElectionClaim extends QueueClaim<Leadership> {

        private final String value;

        ElectionClaim(String value) {
            super(EtcdElectionService.this.session, EtcdElectionService.this.ownKey, false, EtcdElectionService.this);
            this.value = value;
        }

        /**
         * One Txn: create the own key with the value if absent (else keep its CreateRevision and update
         * its value, as Go's Campaign does with a Proclaim), and read the current leader (lowest
         * CreateRevision). jetcd lists only the Get results: the leader is at index 0 in the Then branch
         * and at index 1 in the Else branch, after the own key ({@link EtcdLockService#created}).
         */
        @Override
        CompletableFuture<Created> create() {
            GetOption firstCreated = GetOption.builder()
                    .withRange(candidates.end())
                    .withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND)
                    .withLimit(1)
                    .build();
            Op getLeader = Op.get(candidates.start(), firstCreated);
            Op put = Op.put(ownKey, KeyRange.bytes(value), PutOption.builder().withLeaseId(session.leaseId()).build());
            return session.rpc("campaign Txn", () -> session.client().getKVClient().txn()
                            .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(put, getLeader)
                            .Else(Op.get(ownKey, GetOption.DEFAULT), put, getLeader)
                            .commit())
                    .thenApply(EtcdLockService::created);
        }

        @Override
        KeyRange waitRange() {
            return candidates;
        }

        @Override
        CompletableFuture<Leadership> grant(long myRevision, long revision) {
            return CompletableFuture.completedFuture(new Leadership(key, value, FencingToken.of(myRevision)));
        }

        @Override
        void commit(Leadership leadership, long myRevision) {
            held = leadership;
            heldCreateRevision = myRevision;
            pending = null;
        }

        @Override
        void ended() {
            synchronized (EtcdElectionService.this) {
                if (pending == this) {
                    pending = null;
                }
            }
        }

        @Override
        DiscoException lost(DiscoException cause) {
            return new LeadershipLostException("election " + prefix + ": candidacy lost while waiting: " + cause.getMessage(), cause);
        }
    }
}
