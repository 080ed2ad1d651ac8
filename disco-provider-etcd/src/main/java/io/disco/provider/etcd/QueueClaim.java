package io.disco.provider.etcd;

import io.disco.core.internal.grant.Acquisition;
import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One attempt to own a key in a queue of keys ordered by CreateRevision: the acquire step shared by
 * the lock, the read/write lock, the semaphore and the election, as a state machine on the session
 * thread. A primitive supplies its wait range and its grant; its service is all it knows as a
 * {@link ClaimOwner}. Its create Txn is {@link CreateTxn}, the caller's wait on it {@link ClaimCaller},
 * its future {@link ClaimResult}.
 *
 * <ol>
 *   <li>One Txn writes the own key (leased) if absent and reads who is ahead in
 *       {@link #waitRange()}: when nobody was created before the own key, the attempt has won
 *       without waiting; otherwise the answer names the predecessor to watch.</li>
 *   <li>Otherwise wait ({@link PredecessorWait}) until no key created before the own key is left in
 *       the wait range: the deletes of the keys the create Txn named, and of the own key, come in one
 *       watch; the delete that leaves none ahead admits the attempt at its revision, and a delete of the
 *       own key before it fails the attempt: it never reports success without its key (rule 2).</li>
 *   <li>{@link #grant} turns the acquisition into the caller's grant, once the lease is valid for at
 *       least the grant margin, and the service records it under its monitor.</li>
 * </ol>
 *
 * From the create Txn's answer until the grant ends, the own key is watched ({@link OwnKeyWatch}):
 * its deletion by anybody else fails a waiting attempt at once and ends a held grant as a loss of
 * the service ({@link ClaimOwner#heldKeyDeleted}).
 *
 * Every way of giving up (timeout, interruption, cancellation of {@link #result}, failure, loss)
 * deletes the own key, guarded by {@code CreateRevision == myRev}, retrying in the background until
 * etcd confirms it or the session ends; {@link #settled} completes then. When the create Txn's
 * outcome is unknown, {@link LateCreates} takes over: it deletes what that Txn created, whenever it
 * is applied, and every delete stays guarded by a CreateRevision.
 *
 * <p>The state machine ({@link ClaimState}, every move checked) runs on the session thread;
 * {@link #result} may be completed, cancelled or awaited from any thread.
 *
 * @param <G> the grant type; a {@code null} grant means "not acquired" (try-only attempts)
 */
abstract class QueueClaim<G> implements Acquisition<G> {

    final ClaimOwner<G> service;
    final SessionCore session;
    final ByteSequence ownKey;
    private final ByteSequence value;
    private final boolean tryOnly;
    final ClaimResult<G> result = new ClaimResult<>();
    private final CompletableFuture<Void> settled = new CompletableFuture<>();

    // Session thread only.
    private ClaimState state = ClaimState.NEW;
    /** The own key's CreateRevision once the create Txn is answered; 0 when there is no own key to delete. */
    private long myRevision;

    private PredecessorWait wait;
    private OwnKeyWatch.Following ownWatch;
    private ByteSequence adoptedValue;
    /** Whether etcd answered the create Txn: read by the awaiting thread, to tell a timeout from an unreachable etcd. */
    private volatile boolean answered;
    /** Completes when etcd answered the create Txn, with whether the claim must wait behind another owner. */
    private final CompletableFuture<Boolean> firstAnswer = new CompletableFuture<>();

    /** When this acquisition started (System.nanoTime()), for the listeners' wait times. */
    final long startedNanos = System.nanoTime();

    QueueClaim(ClaimOwner<G> service, ByteSequence ownKey, ByteSequence value, boolean tryOnly) {
        this.service = service;
        this.session = service.session();
        this.ownKey = ownKey;
        this.value = value;
        this.tryOnly = tryOnly;
        result.whenComplete((g, e) -> {
            if (e != null) {
                session.runOnSession(() -> giveUp(e));
            }
        });
    }

    /** Where this owner's predecessors live. */
    abstract KeyRange waitRange();

    /**
     * The range a wait watches: one that holds the {@link #waitRange()} and the own key, so that the deletes of
     * both come in one watch, in revision order. The wait range itself when it holds the own key.
     */
    KeyRange watchRange() {
        return waitRange();
    }

    /** Builds the grant of an acquisition whose own key has CreateRevision {@code myRevision}, acquired at {@code revision}. */
    abstract CompletableFuture<G> grant(long myRevision, long revision);

    /**
     * How many predecessors in the wait range may remain when this owner is admitted: 0 for the
     * mutual-exclusion recipes, {@code limit - 1} for a semaphore.
     */
    int allowedAhead() {
        return 0;
    }

    /** Session thread: a grant was built but is not handed out (given up at that instant); undo what building it wrote. */
    void discarded(G grant) {}

    @Override
    public final boolean tryOnly() {
        return tryOnly;
    }

    /** Answered without a claim of its own (the grant held already, or a try that found a release in the way). */
    @Override
    public final void answerAtOnce(G held) {
        result.internalComplete(held);
        settled.complete(null);
    }

    /**
     * Told under the ledger's monitor just before the caller can see the grant (the listeners' "acquired": so that it
     * is told before anything the caller does with the grant, its release first of all); set by the service's commit.
     */
    volatile Runnable beforeHandOver = () -> {};

    /** Told when "acquired" was told but the caller had given up at that instant (the listeners' "released"). */
    volatile Runnable handOverUndone = () -> {};

    /** The commit point: the caller's future completes with the grant, unless the caller gave up first. */
    @Override
    public final boolean handOver(G grant) {
        if (result.isDone()) {
            return false;
        }
        beforeHandOver.run();
        if (!result.internalComplete(grant)) {
            handOverUndone.run();
            return false;
        }
        return true;
    }

    @Override
    public final void fail(Throwable cause) {
        abandon(cause);
    }

    /** The value of the own key when the claim adopted an existing one (its create Txn found it), else null. Session thread. */
    final ByteSequence adoptedValue() {
        return adoptedValue;
    }

    /** Whether etcd answered the create Txn; any thread (the caller's, to tell a timeout from an unreachable etcd). */
    final boolean answered() {
        return answered;
    }

    /** Completes when etcd answered the create Txn, with whether the claim must wait behind another owner. */
    final CompletableFuture<Boolean> firstAnswer() {
        return firstAnswer;
    }

    /** Completes once nothing of this attempt is left to withdraw (its key deleted, or its grant committed). */
    final CompletableFuture<Void> settled() {
        return settled;
    }

    /**
     * Starts the attempt once {@code previous} (this service's attempt before it, or null) has nothing
     * left to withdraw: otherwise its guarded delete could remove the very key this attempt adopts
     * (same key, same CreateRevision); and once {@code releaseFirst} (the unconfirmed release of the
     * service's grant before, or null) has completed: until then that grant's key incarnation may still
     * be there, and the create Txn would adopt it, with the released grant's token.
     */
    final void startAfter(QueueClaim<?> previous, CompletableFuture<?> releaseFirst) {
        CompletableFuture<?> before = previous == null ? null : previous.settled;
        if (releaseFirst != null) {
            before = before == null ? releaseFirst : CompletableFuture.allOf(before, releaseFirst);
        }
        if (before == null) {
            session.runHere(this::doCreate); // the caller holds no lock of ours here
        } else {
            // Here, or in the session's context when it completes there: neither holds a lock of ours.
            before.whenComplete((v, e) -> session.runHere(this::doCreate));
        }
    }

    /** Moves to {@code next}; a move the claim never makes fails loudly (see {@link ClaimState#to}). */
    private void move(ClaimState next) {
        state = state.to(next);
    }

    private void doCreate() {
        if (state != ClaimState.NEW) {
            settled.complete(null); // given up before it started
            return;
        }
        CompletableFuture<Void> janitor = session.lateCreates().deleting(ownKey);
        if (!janitor.isDone()) {
            // The janitor is deleting an incarnation of this key that nobody owns: adopting it now could race that
            // delete.
            janitor.whenComplete((v, e) -> session.runOnSession(this::doCreate));
            return;
        }
        move(ClaimState.CREATING);
        AtomicInteger copies = new AtomicInteger();
        create(copies).whenComplete((c, e) -> {
            if (e != null) {
                // The outcome is unknown: the Txn may have been applied, or may be applied later still.
                if (state == ClaimState.ABANDONED) {
                    withdraw(true);
                } else {
                    giveUp(cause(e), true);
                }
                return;
            }
            answered = true;
            firstAnswer.complete(c.mustWait());
            myRevision = c.myRevision();
            adoptedValue = c.adoptedValue();
            if (copies.get() > 1) {
                // A copy sent to a member that did not answer may still be applied, after this key is gone.
                session.lateCreates().watch(ownKey);
            }
            if (state == ClaimState.ABANDONED) {
                withdraw(false);
                return;
            }
            if (c.mustWait() && tryOnly) {
                notAcquired();
                return;
            }
            long mine = myRevision;
            ownWatch = service.ownKeyWatch(ownKey).follow(mine, c.revision(), () -> ownKeyDeleted(mine));
            if (!c.mustWait()) {
                move(ClaimState.VALIDATING);
                acquired(c.revision());
                return;
            }
            move(ClaimState.WAITING);
            wait = new PredecessorWait(session, waitRange(), watchRange(), ownKey, myRevision - 1, allowedAhead())
                    .start(c.ahead());
            scheduleAccessCheck(mine);
            wait.future.whenComplete((revision, we) -> {
                if (we instanceof PredecessorWait.OwnKeyDeletedException gone) {
                    ownKeyGone(gone);
                } else if (we != null) {
                    failed(we);
                } else if (state == ClaimState.WAITING) {
                    move(ClaimState.VALIDATING);
                    acquired(revision);
                }
            });
        });
    }

    /**
     * Session thread: while waiting, the own key is read (count only) once per request timeout, so that
     * a wait whose read permission was taken away fails within about a request timeout with an
     * {@link io.disco.fencing.AccessDeniedException}, instead of waiting for a change it could not read.
     * Transient failures are left to the wait's own retries.
     */
    private void scheduleAccessCheck(long mine) {
        session.schedule(
                () -> {
                    if (state != ClaimState.WAITING || myRevision != mine || wait.future.isDone()) {
                        return;
                    }
                    session.rpc(
                                    "permission check of the own key",
                                    () -> session.client()
                                            .getKVClient()
                                            .get(
                                                    ownKey,
                                                    GetOption.builder()
                                                            .withCountOnly(true)
                                                            .build()))
                            .whenComplete((r, e) -> {
                                if (state.finished() || myRevision != mine) {
                                    return;
                                }
                                if (e != null && !EtcdErrors.isTransient(e)) {
                                    failed(e);
                                    return;
                                }
                                scheduleAccessCheck(mine);
                            });
                },
                session.requestTimeout().toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Sends the create Txn ({@link CreateTxn}) of this claim; {@code copies} counts the copies sent. */
    private CompletableFuture<CreateAnswer> create(AtomicInteger copies) {
        return CreateTxn.send(session, service.kind(), ownKey, value, waitRange(), allowedAhead(), copies);
    }

    /** Session thread: the own key incarnation created at {@code createRevision} is gone. */
    private void ownKeyDeleted(long createRevision) {
        if (state == ClaimState.COMMITTED) {
            service.heldKeyDeleted(createRevision);
        } else if (!state.finished() && myRevision == createRevision) {
            ownKeyGone(new PredecessorWait.OwnKeyDeletedException(ownKey));
        }
    }

    /** The own key vanished: the lease is gone (or the key was deleted by hand). Nothing is left to delete. */
    final void ownKeyGone(DiscoException cause) {
        myRevision = 0;
        failed(service.lostException(
                service.kind() + " " + service.name() + " lost while acquiring: " + cause.getMessage(), cause));
        session.probeLease();
    }

    /**
     * Grants once the lease is valid for at least the grant margin
     * ({@link EtcdOptions.Builder#grantMargin}): a grant whose lease may expire a moment later is
     * worth nothing to its owner, so a slow answer waits for a renewal first (and fails if the lease
     * is lost instead).
     */
    private void acquired(long revision) {
        if (state != ClaimState.VALIDATING) {
            return;
        }
        CompletableFuture<Void> valid = session.validForGrant();
        if (valid.isDone() && !valid.isCompletedExceptionally()) {
            grantNow(revision);
            return;
        }
        valid.whenComplete((v, e) -> session.runOnSession(() -> {
            if (e == null) {
                grantNow(revision);
            } else if (!state.finished()) {
                Throwable cause = EtcdErrors.unwrap(e);
                failed(
                        session.isLost()
                                ? service.lostException(
                                        service.kind() + " " + service.name() + " lost while acquiring: "
                                                + cause.getMessage(),
                                        cause)
                                : cause);
            }
        }));
    }

    private void grantNow(long revision) {
        if (state != ClaimState.VALIDATING) {
            return;
        }
        grant(myRevision, revision).whenComplete((g, e) -> {
            if (e != null) {
                failed(e);
            } else {
                finishWith(g);
            }
        });
    }

    private void finishWith(G grant) {
        if (state != ClaimState.VALIDATING) {
            // Given up while the grant was being built: the claim is withdrawn already.
            if (grant != null) {
                discarded(grant);
            }
            return;
        }
        if (grant == null) {
            notAcquired();
            return;
        }
        Throwable refused = service.commit(this, grant, ownKey, myRevision, ownWatch, startedNanos);
        if (refused != null) {
            discarded(grant);
            giveUp(refused); // closed, lost, or given up by the caller at this instant: withdraw
            return;
        }
        move(ClaimState.COMMITTED);
        settled.complete(null);
    }

    /** Not acquired (try-only): answers once the own key is withdrawn, so none is left behind. */
    private void notAcquired() {
        move(ClaimState.WITHDRAWING);
        withdraw(false);
        settled.whenComplete((v, e) -> result.internalComplete(null));
    }

    /** Session thread: gives the attempt up with {@code e}, as the caller sees it. */
    private void failed(Throwable e) {
        giveUp(cause(e));
    }

    private Throwable cause(Throwable e) {
        return e instanceof DiscoException ? e : EtcdErrors.failure(service.kind() + " acquisition", e);
    }

    /** Gives up the attempt for {@code cause}; idempotent; session thread only. */
    final void giveUp(Throwable cause) {
        giveUp(cause, false);
    }

    /**
     * @param createFailed whether the create Txn has just failed: its outcome is unknown, and the
     *     janitor withdraws whatever it creates
     */
    private void giveUp(Throwable cause, boolean createFailed) {
        if (state.finished()) {
            return;
        }
        boolean createInFlight = state == ClaimState.CREATING && !createFailed;
        move(createInFlight ? ClaimState.ABANDONED : ClaimState.WITHDRAWING);
        if (wait != null) {
            wait.cancel();
        }
        service.events().acquisitionFailed(cause, startedNanos);
        result.internalFail(cause);
        if (!createInFlight) {
            withdraw(createFailed); // else the create Txn's answer does
        }
    }

    /**
     * Like {@link #giveUp} but callable from any thread.
     *
     * @return completes once nothing of this attempt is left to withdraw
     */
    final CompletableFuture<Void> abandon(Throwable cause) {
        session.runOnSession(() -> giveUp(cause));
        return settled;
    }

    /**
     * Deletes what is left of the attempt, and completes {@link #settled} once that is done.
     *
     * @param createOutcomeUnknown whether the create Txn failed: it may have been applied, or be applied later
     */
    private void withdraw(boolean createOutcomeUnknown) {
        if (state == ClaimState.ABANDONED) {
            move(ClaimState.WITHDRAWING);
        }
        if (ownWatch != null) {
            ownWatch.stop();
            ownWatch = null;
        }
        CompletableFuture<Void> withdrawn;
        if (createOutcomeUnknown) {
            // The create Txn may have been applied, or may be applied later still: the janitor deletes
            // whatever it creates that no claim owns, now and for as long as the session lives.
            withdrawn = session.lateCreates().watch(ownKey);
        } else if (myRevision != 0) {
            withdrawn = session.deleteOwnKey(ownKey, myRevision);
        } else {
            withdrawn = CompletableFuture.completedFuture(null);
        }
        myRevision = 0;
        withdrawn.whenComplete((v, e) -> {
            if (state == ClaimState.WITHDRAWING) {
                move(ClaimState.SETTLED);
            }
            settled.complete(null);
        });
    }

    /**
     * Session thread. Whether this claim owns the incarnation of its key created at
     * {@code createRevision} (see {@link SessionMember#lateIncarnation}): it does while it is
     * waiting or acquiring with that key; it may, until its create Txn is answered (it adopts an
     * existing key), so the answer is then "ask again once it has settled".
     */
    final CompletableFuture<?> ownership(long createRevision) {
        if (state.finished()) {
            return null;
        }
        if (!answered) {
            return settled;
        }
        return myRevision == createRevision ? CompletableFuture.completedFuture(null) : null;
    }
}
