package io.disco.provider.etcd;

import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.NotLeaderException;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * etcd's {@code concurrency.Election} behind {@link ElectionService}: the candidate key is
 * {@code <name>/<lease id in hex>} with the candidate's value; the leader is the key with the lowest
 * CreateRevision under {@code <name>/}; the fencing token of a term is the CreateRevision of the
 * winning key, unchanged by {@code proclaim}. Campaigning reuses the lock's acquire state machine
 * ({@link QueueClaim}: create Txn, wait for the newest predecessor, linearizable re-read, cleanup on
 * every way of giving up).
 */
final class EtcdElectionService extends EtcdService<Leadership, LeadershipLostException> implements ElectionService {

    private final String key;
    private final ByteSequence ownKey;
    private final KeyRange candidates;

    // Guarded by lock.
    private final List<EtcdObservation> observations = new ArrayList<>();

    private EtcdElectionService(SessionCore session, String name, boolean ownsSession) {
        super(session, name, Primitive.ELECTION, "election", ownsSession);
        this.key = leaseKey(name);
        this.ownKey = KeyRange.bytes(key);
        this.candidates = KeyRange.prefix(EtcdKeys.queue(name));
    }

    static EtcdElectionService create(SessionCore session, String name, boolean ownsSession) {
        return register(new EtcdElectionService(session, name, ownsSession));
    }

    // ---------------------------------------------------------------- campaign

    @Override
    public Leadership campaign(String value) throws InterruptedException {
        try {
            return campaignWithin(value, null);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Leadership campaign(String value, Duration timeout) throws InterruptedException, TimeoutException {
        validValue(value);
        Leadership l = acquireWithin(
                "election.campaign()",
                timeout,
                UnaryOperator.identity(),
                () -> new ElectionClaim(value, false),
                () -> new ElectionClaim(value, true));
        return l.value().equals(value) ? l : proclaim(value);
    }

    /** {@link #campaign(String, Duration)} without a limit. */
    private Leadership campaignWithin(String value, Duration timeout) throws InterruptedException, TimeoutException {
        Leadership l = acquire(
                "election.campaign()",
                timeout,
                UnaryOperator.identity(),
                () -> new ElectionClaim(validValue(value), false));
        return l.value().equals(value) ? l : proclaim(value);
    }

    @Override
    public CompletableFuture<Leadership> campaignAsync(String value) {
        Optional<Leadership> leading = held();
        if (leading.isPresent() && !leading.get().value().equals(validValue(value))) {
            return toUser(proclaiming(value));
        }
        // The claim's own future, so that cancelling it withdraws the candidacy.
        return acquireAsync(UnaryOperator.identity(), () -> new ElectionClaim(validValue(value), false));
    }

    private static String validValue(String value) {
        return Objects.requireNonNull(value, "value");
    }

    @Override
    LeadershipLostException lostException(String message, Throwable cause) {
        return new LeadershipLostException(message, cause);
    }

    // ---------------------------------------------------------------- proclaim, resign

    @Override
    public Leadership proclaim(String value) {
        return awaitAnswer(proclaiming(validValue(value)), "proclamation", "its outcome is unknown, retry");
    }

    @Override
    public CompletableFuture<Leadership> proclaimAsync(String value) {
        return toUser(proclaiming(validValue(value)).thenApply(l -> l));
    }

    /** Go's {@code Proclaim}: Put the own key with the new value, only while it is still the key that won. */
    private CompletableFuture<Leadership> proclaiming(String value) {
        HeldGrant<Leadership> term = heldGrant(); // the grant and its key's CreateRevision of one term
        if (term == null) {
            return CompletableFuture.failedFuture(new NotLeaderException(
                    "election " + name + ": " + key + " is not the leader; only the leader can proclaim"));
        }
        Leadership l = term.grant();
        long rev = term.createRevision();
        return writeValue("proclamation", rev, value).thenApply((TxnResponse r) -> {
            if (!r.isSucceeded()) {
                // Our key is gone (lease expired or revoked, or deleted by hand): the term is over, a loss.
                heldKeyDeleted(rev); // any thread: the ledger and the loss are thread-safe
                throw new NotLeaderException("election " + name + ": " + key
                        + " is no longer the leader (its key is gone); the term with token " + l.token()
                        + " has ended");
            }
            // The term this proclamation was applied to; if it has ended meanwhile (resigned), it stays ended.
            Leadership proclaimed = l.withValue(value);
            replaceHeld(rev, proclaimed);
            return proclaimed;
        });
    }

    /**
     * Puts {@code value} into the own key while it is the incarnation created at {@code createRevision};
     * sent once, since a copy applied late could overwrite a newer value.
     */
    private CompletableFuture<TxnResponse> writeValue(String what, long createRevision, String value) {
        return session.rpcOnce(
                what,
                () -> session.client()
                        .getKVClient()
                        .txn()
                        .If(new Cmp(ownKey, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                        .Then(Op.put(
                                ownKey,
                                KeyRange.bytes(value),
                                PutOption.builder()
                                        .withLeaseId(session.leaseId())
                                        .build()))
                        .commit());
    }

    @Override
    public void resign() {
        // Deleting only while CreateRevision == ours: never someone else's key, and a retry is harmless.
        release("election.resign()", "resignation");
    }

    @Override
    public CompletableFuture<Void> resignAsync() {
        return releaseAsync("resignation");
    }

    // ---------------------------------------------------------------- leader, observe

    @Override
    public Optional<Leadership> leader() {
        checkOpen();
        GetResponse r = awaitAnswer(
                session.rpc(
                        "read of the leader",
                        () -> session.client().getKVClient().get(candidates.start(), candidates.firstCreated())),
                "read of the leader",
                "retry");
        return r.getKvs().isEmpty()
                ? Optional.empty()
                : Optional.of(leadership(r.getKvs().get(0)));
    }

    static Leadership leadership(KeyValue kv) {
        return new Leadership(
                kv.getKey().toString(StandardCharsets.UTF_8),
                kv.getValue().toString(StandardCharsets.UTF_8),
                FencingToken.of(kv.getCreateRevision()));
    }

    @Override
    public Observation observe(Consumer<Leadership> listener) {
        Objects.requireNonNull(listener, "listener");
        EtcdObservation obs;
        synchronized (observations) {
            checkOpen();
            obs = new EtcdObservation(
                    session.client(),
                    name,
                    candidates,
                    session.requestTimeout(),
                    session.probeTimeoutNanos(),
                    listener,
                    this::forget);
            observations.add(obs);
        }
        return obs.start();
    }

    private void forget(EtcdObservation obs) {
        synchronized (observations) {
            observations.remove(obs);
        }
    }

    /** Observations end with the service (on the closing user's thread: a listener call in progress is waited for, unless it is the closer). */
    @Override
    void closing() {
        List<EtcdObservation> obs;
        synchronized (observations) {
            obs = new ArrayList<>(observations);
        }
        for (EtcdObservation o : obs) {
            o.close();
        }
    }

    // ---------------------------------------------------------------- the campaign

    private final class ElectionClaim extends QueueClaim<Leadership> {

        private final String value;

        /**
         * Go's Campaign: the own key holds the value; an existing key keeps its CreateRevision and gets the value.
         * A try-only claim (a campaign with a timeout of zero or less) is withdrawn if another candidate is ahead.
         */
        ElectionClaim(String value, boolean tryOnly) {
            super(EtcdElectionService.this, EtcdElectionService.this.ownKey, KeyRange.bytes(value), tryOnly);
            this.value = value;
        }

        @Override
        KeyRange waitRange() {
            return candidates;
        }

        /**
         * The token of a term: the CreateRevision of the winning key. A candidate key that existed
         * already (adopted) gets this campaign's value first, guarded by its CreateRevision and sent
         * once, like a proclamation (the create Txn, which may be sent more than once, never writes
         * an existing key).
         */
        @Override
        CompletableFuture<Leadership> grant(long myRevision, long revision) {
            Leadership l = new Leadership(key, value, FencingToken.of(myRevision));
            ByteSequence adopted = adoptedValue();
            if (adopted == null || adopted.equals(KeyRange.bytes(value))) {
                return CompletableFuture.completedFuture(l);
            }
            return writeValue("write of the campaign value", myRevision, value).thenApply((TxnResponse r) -> {
                if (!r.isSucceeded()) {
                    throw new PredecessorWait.OwnKeyDeletedException(ownKey);
                }
                return l;
            });
        }
    }
}
