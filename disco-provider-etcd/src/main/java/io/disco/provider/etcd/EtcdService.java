package io.disco.provider.etcd;

import io.disco.client.Names;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.core.internal.grant.Acquisition;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Timeouts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Op;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * What the lock, read/write lock, semaphore and election services share: one owner per service on one session's
 * lease, on the one grant lifecycle every backend shares (disco-core's internal {@link GrantLedger}, whose hooks
 * here are the {@link QueueClaim}, the {@link HeldGrant} and the {@link KeyRelease}). Its duties: start an
 * acquisition after the previous one has withdrawn and an unconfirmed release is confirmed, or answer with the held
 * grant; wait for it as the caller asked (blocking, bounded, try-only, asynchronous: {@link ClaimCaller}); commit
 * what a claim won and watch its key, whose deletion by anybody else is the loss ({@link GrantLoss}); release
 * ({@link GrantRelease}); register the service on its session and take part in the session's endings
 * ({@link SessionMember}); close. A primitive (one file each) supplies its keys, its claim and its grant.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class EtcdService<G, L extends DiscoException> extends ClaimOwner<G> implements SessionMember {

    static final Op[] NO_OPS = new Op[0];

    final SessionCore session;
    final String name;
    /** What the service is called in messages: "lock", "read/write lock", "election". */
    final String kind;

    private final boolean ownsSession;
    private final GrantLedger<G, HeldGrant<G>, Acquisition<G>, KeyRelease<G>, L> ledger;
    private final GrantEvents events;
    private final GrantLoss<G, L> loss;
    private final GrantRelease<G, L> releases;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    /** One watch per own key (a read/write lock has two), kept across acquisitions; session thread only. */
    private final Map<ByteSequence, OwnKeyWatch> ownKeyWatches = new HashMap<>();

    /** Guards {@link #latest}. */
    private final Object starting = new Object();
    /** The latest acquisition of the service (the one in progress, or the last one), or null. */
    private QueueClaim<G> latest;

    EtcdService(SessionCore session, String name, Primitive primitive, String kind, boolean ownsSession) {
        this.session = Objects.requireNonNull(session, "session");
        this.name = validName(name);
        this.kind = kind;
        this.ownsSession = ownsSession;
        this.ledger = new GrantLedger<>(kind + " service " + this.name);
        this.events = new GrantEvents(session.events(), session.front(), primitive, this.name);
        this.loss = new GrantLoss<>(session, ledger, events, this::finish);
        this.releases = new GrantRelease<>(this, ledger, loss, events, this::releaseOps, this::lostException);
    }

    /**
     * The timeout of a bounded acquire, checked: never null (the unbounded form is the method without
     * the parameter), so that a missing configuration value is no silent wait for ever.
     */
    static Duration requireTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout"); // to wait without a limit, call the method without a timeout
    }

    /** Registers the service on its session: its keys must not fall in another service's range there. */
    static <S extends EtcdService<?, ?>> S register(S service) {
        service.session.register(service);
        return service;
    }

    /** The name rule of every backend and of the client ({@link Names#check}). */
    static String validName(String name) {
        return Names.check(name);
    }

    /** This session's key under {@code dir}: {@code <dir>/<lease id in hex>}, as etcd's Go recipes name it. */
    final String leaseKey(String dir) {
        return EtcdKeys.queue(dir) + session.leaseHex();
    }

    /** Called when the service is closed (on the caller's thread) or its session is (on the closing thread). */
    void closing() {}

    /** What else a release of {@code held} deletes, in the Txn that deletes its key (guarded on it); none by default. */
    Op[] releaseOps(G held) {
        return NO_OPS;
    }

    /** The service's lease-lost exception. */
    @Override
    abstract L lostException(String message, Throwable cause);

    @Override
    final SessionCore session() {
        return session;
    }

    @Override
    public final String name() {
        return name;
    }

    /** @return what this service's session's listeners hear of its grants */
    @Override
    final GrantEvents events() {
        return events;
    }

    @Override
    public final String kind() {
        return kind;
    }

    // ---------------------------------------------------------------- acquiring

    /**
     * Blocking acquire. {@code whenHeld} maps the held grant to the answer (or throws when it does not
     * fit the request); otherwise a new claim from {@code newClaim} runs. The caller waits on the
     * claim's internal future, which completes on the session thread: no user code is attached to it.
     */
    final G acquire(String call, Duration timeout, UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim)
            throws InterruptedException, TimeoutException {
        SessionThread.refuseOnSessionThread(call);
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    kind + " " + name + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        QueueClaim<G> claim = newClaim.get();
        return begin(whenHeld, claim) ? new ClaimCaller<>(claim).await(timeout) : claim.result.join();
    }

    /**
     * A bounded acquisition, by the rule of {@link Timeouts}: zero or less is one try ({@code tryClaim}, as the
     * try-method makes it), a {@link TimeoutException} if somebody is in the way; a timeout too long to count in
     * nanoseconds waits without a limit ({@code newClaim}, as the method without a timeout).
     *
     * @param newClaim makes the claim that waits
     * @param tryClaim makes the try-only claim
     */
    final G acquireWithin(
            String call,
            Duration timeout,
            UnaryOperator<G> whenHeld,
            Supplier<QueueClaim<G>> newClaim,
            Supplier<QueueClaim<G>> tryClaim)
            throws InterruptedException, TimeoutException {
        requireTimeout(timeout);
        if (!Timeouts.tryOnly(timeout)) {
            return acquire(call, Timeouts.unlimited(timeout) ? null : timeout, whenHeld, newClaim);
        }
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    kind + " " + name + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        return tryAcquire(call, whenHeld, tryClaim)
                .orElseThrow(() -> new TimeoutException(kind + " " + name + ": not free now (a timeout of " + timeout
                        + " is one try, at once); this owner's claim was withdrawn"));
    }

    final Optional<G> tryAcquire(String call, UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        SessionThread.refuseOnSessionThread(call);
        QueueClaim<G> claim = newClaim.get();
        return Optional.ofNullable(begin(whenHeld, claim) ? new ClaimCaller<>(claim).join() : claim.result.join());
    }

    /** The user's view of an acquisition: completes on the callback executor; cancelling it withdraws the claim. */
    final CompletableFuture<G> acquireAsync(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        QueueClaim<G> claim = newClaim.get();
        if (!begin(whenHeld, claim)) {
            UserFuture<G> answered = new UserFuture<>(session.callbackExecutor(), null);
            answered.answer(claim.result.join(), null);
            return answered;
        }
        return toUser(claim.result);
    }

    /**
     * Begins {@code claim} in the ledger. A grant whose release is unconfirmed is never handed out again (issue
     * 44): its token may be in a delete that etcd applies at any moment, after which another owner is granted. So
     * while a release is unconfirmed, a try-only claim finds it in the way (answered with null, not acquired) and
     * any other starts once the release is confirmed, with a new key incarnation and so a new token.
     *
     * @return whether the claim runs; false: it was answered at once (the held grant, or null)
     */
    private boolean begin(UnaryOperator<G> whenHeld, QueueClaim<G> claim) {
        Optional<L> lost = ledger.loss();
        if (lost.isPresent()) {
            throw lostException(
                    kind + " " + name + " is unusable: " + lost.get().getMessage(), lost.get());
        }
        GrantLedger.Begun<KeyRelease<G>> begun = ledger.begin(claim, held -> whenHeld.apply(held.grant()));
        if (begun.answered()) {
            return false;
        }
        QueueClaim<G> previous;
        synchronized (starting) {
            previous = latest;
            latest = claim;
        }
        // the service is free for the next acquisition before anyone sees this one end without a grant
        claim.result.beforeEnd(() -> ledger.acquisitionEnded(claim));
        KeyRelease<G> releaseFirst = begun.releaseFirst();
        claim.startAfter(previous, releaseFirst == null ? null : releaseFirst.confirmed.exceptionally(e -> null));
        return true;
    }

    private QueueClaim<G> latest() {
        synchronized (starting) {
            return latest;
        }
    }

    // ---------------------------------------------------------------- what a claim sees (ClaimOwner)

    @Override
    final Throwable commit(
            QueueClaim<G> claim,
            G grant,
            ByteSequence key,
            long createRevision,
            OwnKeyWatch.Following watch,
            long startedNanos) {
        HeldGrant<G> held = new HeldGrant<>(grant, key, createRevision, watch, System.nanoTime());
        FencingToken token = GrantEvents.tokenOf(grant);
        claim.beforeHandOver = () -> events.acquired(token, held.keyText(), startedNanos, held.sinceNanos());
        claim.handOverUndone = () -> events.ended(held.sinceNanos(), null);
        if (!ledger.commit(claim, held)) {
            Optional<L> lost = ledger.loss();
            if (lost.isPresent()) {
                return lost.get();
            }
            return ledger.closed()
                    ? new IllegalStateException(kind + " service " + name + " closed")
                    : new CancellationException("the caller gave up");
        }
        return null;
    }

    /**
     * Session thread: the held key incarnation created at {@code createRevision} was deleted. When a release of it
     * is unconfirmed, that is the release's delete (or somebody's at the same time: the release's answer tells):
     * the grant has ended. Otherwise it was not deleted by this service (somebody's {@code etcdctl del}, a revoke
     * of the lease by another process): a loss of this service, reported like a lease loss ({@link #done()},
     * {@link #err()}, and the next release throws it). The lease may be gone too: it is checked at once.
     */
    @Override
    final void heldKeyDeleted(long createRevision) {
        GrantLedger.Gone<KeyRelease<G>> gone = ledger.gone(h -> h.createRevision() == createRevision);
        if (gone.release() != null) {
            releases.seenGone(gone.release());
            return;
        }
        HeldGrant<G> held = ledger.heldIf(h -> h.createRevision() == createRevision);
        if (held == null || session.isLost()) {
            return; // nothing held, or another term; or the lease is gone, and the session's loss tells this service
        }
        L lost = lostException(
                kind + " " + name + " lost: its key " + held.keyText() + held.tokenText() + " was deleted while held",
                null);
        if (loss.lose(lost)) {
            session.warnHeldKeyDeleted(lost.getMessage());
            session.probeLease();
        }
    }

    @Override
    final OwnKeyWatch ownKeyWatch(ByteSequence ownKey) {
        return ownKeyWatches.computeIfAbsent(ownKey, k -> new OwnKeyWatch(session, k));
    }

    /** Session thread. See {@link SessionMember#lateIncarnation}. */
    @Override
    public final CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision) {
        GrantLedger.Gone<KeyRelease<G>> ours =
                ledger.gone(h -> h.key().equals(key) && h.createRevision() == createRevision);
        if (ours.held() || ours.release() != null) {
            return CompletableFuture.completedFuture(null); // held, or its release deletes it
        }
        QueueClaim<G> claim = latest();
        return claim != null && claim.ownKey.equals(key) ? claim.ownership(createRevision) : null;
    }

    // ---------------------------------------------------------------- the held grant

    /** @return the held grant, or empty (also while its release is unconfirmed: the grant is given up) */
    public final Optional<G> held() {
        return ledger.held();
    }

    /** @return the held grant with its key, or null */
    final HeldGrant<G> heldGrant() {
        return ledger.heldIf(h -> true);
    }

    /** The CreateRevision of the held grant's key, or 0 when nothing is held. */
    final long heldCreateRevision() {
        HeldGrant<G> held = heldGrant();
        return held == null ? 0 : held.createRevision();
    }

    /**
     * Replaces the held grant if it still belongs to the term (the key incarnation) whose key has CreateRevision
     * {@code createRevision}. A term is identified by its key's CreateRevision, never by the grant object, which a
     * proclamation replaces.
     */
    final void replaceHeld(long createRevision, G replacement) {
        ledger.replace(h -> h.createRevision() == createRevision, h -> h.withGrant(replacement));
    }

    final void checkOpen() {
        if (ledger.closed()) {
            throw new IllegalStateException(kind + " service " + name + " is closed");
        }
    }

    // ---------------------------------------------------------------- releasing

    /**
     * Releases the held grant, if any: deletes its key guarded by its CreateRevision (sent again on another member
     * while unanswered: a guarded delete is safe to repeat). Not interruptible: an interrupted caller waits all the
     * same, at most the request timeout, and keeps its interrupt status.
     *
     * <p>The outcomes: etcd deletes the key (returns); etcd refuses the delete for good, a permission taken away
     * (the failure is thrown, the grant is still held and the call can be retried); the key was already gone,
     * deleted by somebody else or with the lease, or the service lost the grant before this call (the loss is
     * thrown: a resumed zombie learns here that it had lost); or no answer within the request timeout. Then the
     * outcome is unknown and the grant is given up at once ({@link #held()} is empty, its token must not be used):
     * the delete is sent again in the background until etcd answers or the session ends, a {@link DiscoException}
     * says so, and no grant is handed out until the release is confirmed (the next acquisition begins after it).
     * Calling this again waits for that same release.
     *
     * @param ofThisCall whether a held grant is one this call releases (a read/write lock's mode)
     * @param mismatch what to throw when it is not: nothing is released
     * @param what the release in messages: "release", "resignation"
     */
    final void release(String call, Predicate<G> ofThisCall, Function<G, RuntimeException> mismatch, String what) {
        SessionThread.refuseOnSessionThread(call);
        KeyRelease<G> r = releases.releasing(ofThisCall, mismatch, what);
        if (r != null) {
            releases.await(r, what);
        }
    }

    /** {@link #release} of any grant this service holds. */
    final void release(String call, String what) {
        release(call, g -> true, g -> null, what);
    }

    /** {@link #release} without blocking: the loss, or a refusal, fails the future; completes on the callback executor. */
    final CompletableFuture<Void> releaseAsync(
            Predicate<G> ofThisCall, Function<G, RuntimeException> mismatch, String what) {
        try {
            KeyRelease<G> r = releases.releasing(ofThisCall, mismatch, what);
            return toUser(r == null ? CompletableFuture.completedFuture(null) : r.confirmed.thenApply(v -> v));
        } catch (RuntimeException e) {
            return toUser(CompletableFuture.failedFuture(e));
        }
    }

    /** {@link #releaseAsync} of any grant this service holds. */
    final CompletableFuture<Void> releaseAsync(String what) {
        return releaseAsync(g -> true, g -> null, what);
    }

    /** {@code internal} as a future for the user: completed on the callback executor. */
    final <T> CompletableFuture<T> toUser(CompletableFuture<T> internal) {
        UserFuture<T> view = new UserFuture<>(session.callbackExecutor(), internal);
        internal.whenComplete((v, e) -> session.deliver(() -> view.answer(v, e)));
        return view;
    }

    /**
     * Waits, at most the request timeout, for the answer to one etcd request made by a blocking call.
     * Failures become a {@link DiscoException} naming the request; {@code ifUnanswered} tells the
     * caller what state it is left in when no answer came (for example "still held, retry").
     */
    final <T> T awaitAnswer(CompletableFuture<T> request, String what, String ifUnanswered) {
        String op = what + " of " + kind + " " + name;
        SessionThread.refuseOnSessionThread("the " + op);
        try {
            return session.await(request, session.requestTimeout().toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted during the " + op + "; " + ifUnanswered, e);
        } catch (TimeoutException e) {
            throw new DiscoException(
                    "etcd could not be reached: no answer to the " + op + " within "
                            + session.requestTimeout().toMillis() + " ms; " + ifUnanswered,
                    e);
        } catch (ExecutionException e) {
            throw EtcdErrors.failure(op, e.getCause());
        }
    }

    // ---------------------------------------------------------------- lifetime

    public final CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public final Optional<L> err() {
        return ledger.loss();
    }

    /** {@link #close()} without blocking the caller: run on the callback executor. */
    public final CompletableFuture<Void> closeAsync() {
        return CompletableFuture.runAsync(this::close, session.callbackExecutor());
    }

    /**
     * Releases what is held and withdraws a pending acquisition; revokes the session if the service
     * owns it (the keys go with the lease). When this returns, no key of this service is left in
     * etcd, unless etcd did not answer within the request timeout (the withdrawal then goes on in
     * the background until the session ends). A closed service never hands out a grant. Idempotent.
     */
    public void close() {
        SessionThread.refuseOnSessionThread(kind + " close()");
        GrantLedger.Closing<Acquisition<G>, KeyRelease<G>> closing =
                ledger.close(held -> releases.newRelease(held, "release"), held -> {});
        if (closing == null) {
            return;
        }
        QueueClaim<G> claim = latest();
        KeyRelease<G> r = closing.release();
        closing();
        if (ownsSession) {
            session.close(); // the lease is revoked: the keys go with it
            if (r != null) {
                releases.endedWithLease(r);
            }
        } else {
            CompletableFuture<Void> withdrawn = CompletableFuture.completedFuture(null);
            if (claim != null) {
                withdrawn = claim.abandon(new IllegalStateException(kind + " service " + name + " closed"));
            }
            if (r != null) {
                if (closing.first()) {
                    r.start();
                }
                withdrawn = CompletableFuture.allOf(withdrawn, r.confirmed.handle((v, e) -> null));
            }
            try {
                withdrawn.get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                // the withdrawal keeps retrying in the background
            }
        }
        session.unregister(this);
        finish();
    }

    /** On the lease thread: marks the loss and completes {@link #done()} at once; the claim gives up on the session thread. */
    @Override
    public final void sessionLost(DiscoException cause) {
        loss.lose(lostException(kind + " " + name + " lost: " + cause.getMessage(), cause));
    }

    @Override
    public final void sessionClosed() {
        GrantLedger.Closing<Acquisition<G>, KeyRelease<G>> closing =
                ledger.close(held -> releases.newRelease(held, "release"), held -> {});
        if (closing != null && closing.release() != null) {
            releases.endedWithLease(closing.release()); // the lease is revoked: the key is gone with it
        }
        QueueClaim<G> claim = latest();
        if (claim != null) {
            claim.abandon(new IllegalStateException(kind + " service " + name + " closed: its session was closed"));
        }
        closing();
        finish();
    }

    private void finish() {
        session.runOnSession(() -> ownKeyWatches.values().forEach(OwnKeyWatch::close));
        session.deliver(() -> done.complete(null));
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{name=" + name + ", lease=" + session.leaseHex() + ", " + ledger.describe()
                + '}';
    }
}
