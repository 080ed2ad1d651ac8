package io.disco.provider.etcd;

import io.disco.core.SessionThread;
import io.disco.core.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * What the lock, read/write lock and election services share: one owner per service on one
 * session's lease, the held grant, at most one acquisition in flight, release, loss and close.
 *
 * <p>The grant's state is a {@link GrantState} (every move checked), the grant itself a
 * {@link HeldGrant}. State is guarded by {@link #lock}, a private object (never the service itself,
 * which users can see and synchronise on); {@link QueueClaim} commits under it too. It is held only
 * for short state changes, never while waiting for etcd or calling out.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class EtcdService<G, L extends DiscoException> extends ClaimOwner<G> implements SessionMember {

    final SessionCore session;
    final String prefix;
    /** What the service is called in messages: "lock", "read/write lock", "election". */
    final String kind;
    private final boolean ownsSession;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    final Object lock = new Object();

    /** One watch per own key (a read/write lock has two), kept across acquisitions; session thread only. */
    private final Map<ByteSequence, OwnKeyWatch> ownKeyWatches = new HashMap<>();

    // Guarded by lock.
    private GrantState state = GrantState.IDLE;
    /** The held grant while {@link GrantState#holding() holding}, else null. */
    private HeldGrant<G> held;
    private QueueClaim<G> latest;
    /** Why the service is unusable: its loss, or null. Set in state LOST, or CLOSED when the loss came after closing. */
    private L lost;
    /**
     * The loss that ended a held grant before it was released, or null: the next release reports it
     * (a resumed zombie learns there that it had lost), even after the service was closed.
     */
    private L unreleasedLoss;

    EtcdService(SessionCore session, String prefix, String kind, boolean ownsSession) {
        this.session = Objects.requireNonNull(session, "session");
        this.prefix = validPrefix(prefix);
        this.kind = kind;
        this.ownsSession = ownsSession;
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

    static String validPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isBlank()) {
            throw new IllegalArgumentException("prefix must not be blank, got '" + prefix + "'");
        }
        return prefix;
    }

    @Override
    final SessionCore session() {
        return session;
    }

    @Override
    public final String prefix() {
        return prefix;
    }

    @Override
    public final String kind() {
        return kind;
    }

    /** This session's key under {@code dir}: {@code <dir>/<lease id in hex>}, as etcd's Go recipes name it. */
    final String leaseKey(String dir) {
        return dir + "/" + session.leaseHex();
    }

    /** The service's lease-lost exception. */
    @Override
    abstract L lostException(String message, Throwable cause);

    /** Called when the service is closed (on the caller's thread) or its session is (on the closing thread). */
    void closing() {
    }

    /** What else a release of {@code held} deletes, in the Txn that deletes its key (guarded on it); none by default. */
    Op[] releaseOps(G held) {
        return NO_OPS;
    }

    private static final Op[] NO_OPS = new Op[0];

    /** Moves to {@code next}; a move the service never makes fails loudly (see {@link GrantState#to}). */
    private void move(GrantState next) {
        assert Thread.holdsLock(lock);
        state = state.to(next);
    }

    /** Ends the held grant: stops watching its key. */
    private void dropHeld() {
        assert Thread.holdsLock(lock);
        if (held != null && held.watch() != null) {
            held.watch().stop();
        }
        held = null;
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
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Object begun = begin(whenHeld, newClaim);
        return begun instanceof QueueClaim ? claim(begun).await(timeout) : grant(begun);
    }

    final Optional<G> tryAcquire(String call, UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        SessionThread.refuseOnSessionThread(call);
        Object begun = begin(whenHeld, newClaim);
        return Optional.ofNullable(begun instanceof QueueClaim ? claim(begun).join() : grant(begun));
    }

    /** The user's view of an acquisition: completes on the callback executor; cancelling it withdraws the claim. */
    final CompletableFuture<G> acquireAsync(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        Object begun = begin(whenHeld, newClaim);
        if (!(begun instanceof QueueClaim)) {
            UserFuture<G> answered = new UserFuture<>(session.callbackExecutor(), null);
            answered.answer(grant(begun), null);
            return answered;
        }
        return toUser(claim(begun).result);
    }

    /** {@code internal} as a future for the user: completed on the callback executor. */
    final <T> CompletableFuture<T> toUser(CompletableFuture<T> internal) {
        UserFuture<T> view = new UserFuture<>(session.callbackExecutor(), internal);
        internal.whenComplete((v, e) -> session.deliver(() -> view.answer(v, e)));
        return view;
    }

    /** @return the held grant's answer, or a started claim */
    private Object begin(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        QueueClaim<G> claim;
        QueueClaim<G> previous;
        synchronized (lock) {
            checkUsable();
            if (held != null) {
                return whenHeld.apply(held.grant());
            }
            if (latest != null && !latest.result.isDone()) {
                throw new IllegalStateException(kind + " " + prefix + ": another acquisition of this service is in progress;"
                        + " one service is one owner (use one service per concurrent owner)");
            }
            previous = latest;
            claim = newClaim.get();
            latest = claim;
        }
        claim.startAfter(previous);
        return claim;
    }

    @SuppressWarnings("unchecked")
    private QueueClaim<G> claim(Object begun) {
        return (QueueClaim<G>) begun;
    }

    @SuppressWarnings("unchecked")
    private G grant(Object begun) {
        return (G) begun;
    }

    @Override
    final Throwable commit(G grant, ByteSequence ownKey, long createRevision, OwnKeyWatch.Following watch, long startedNanos,
                           Predicate<G> handOver) {
        long since;
        synchronized (lock) {
            if (lost != null) {
                return lost;
            }
            if (state == GrantState.CLOSED) {
                return new IllegalStateException(kind + " service " + prefix + " closed");
            }
            if (!handOver.test(grant)) {
                return new CancellationException("the caller gave up");
            }
            move(GrantState.HELD);
            held = new HeldGrant<>(grant, ownKey, createRevision, watch, System.nanoTime());
            since = held.sinceNanos();
        }
        if (session.listened()) {
            Duration waited = Duration.ofNanos(since - startedNanos);
            String key = ownKey.toString(java.nio.charset.StandardCharsets.UTF_8);
            FencingToken token = grant instanceof Fenced f ? f.token() : null;
            session.tell(l -> l.acquired(session.front(), kind, prefix, key, token, waited));
        }
        return null;
    }

    /** Tells the listeners that the held grant ended; {@code loss} is null for a release. */
    private void tellEnded(long heldSince, Throwable loss) {
        if (!session.listened()) {
            return;
        }
        Duration heldFor = Duration.ofNanos(System.nanoTime() - heldSince);
        if (loss == null) {
            session.tell(l -> l.released(session.front(), kind, prefix, heldFor));
        } else {
            session.tell(l -> l.grantLost(session.front(), kind, prefix, loss, heldFor));
        }
    }

    /**
     * Session thread: the held key incarnation created at {@code createRevision} was deleted. When a
     * release of it was sent (even one whose answer was lost, which failed for the caller and kept the
     * grant), that is the release's delete: the grant ends as released. Otherwise it was not deleted by
     * this service (somebody's {@code etcdctl del}, a revoke of the lease by another process). That ends
     * the grant for good: it is a loss of this service, reported like a lease loss ({@link #done()},
     * {@link #err()}, and the next release throws it). The lease may be gone too: it is checked at once.
     */
    @Override
    final void heldKeyDeleted(long createRevision) {
        L loss;
        synchronized (lock) {
            if (!state.holding() || held.createRevision() != createRevision || lost != null) {
                return; // nothing held, or another term
            }
            if (state == GrantState.RELEASING) {
                // The delete of a release of this grant, whose answer was lost or is still to come: the
                // release is done (held() follows the own key), with no need to call it again.
                move(GrantState.IDLE);
                tellEnded(held.sinceNanos(), null);
                dropHeld();
                return;
            }
            loss = lostException(kind + " " + prefix + " lost: its key " + held.key().toString(java.nio.charset.StandardCharsets.UTF_8)
                    + " (token " + createRevision + ") was deleted while held, not by this owner", null);
            move(GrantState.LOST);
            lost = loss;
            unreleasedLoss = loss;
            tellEnded(held.sinceNanos(), loss);
            dropHeld();
        }
        session.warnHeldKeyDeleted(loss.getMessage());
        session.probeLease();
        finish();
    }

    @Override
    final OwnKeyWatch ownKeyWatch(ByteSequence ownKey) {
        return ownKeyWatches.computeIfAbsent(ownKey, k -> new OwnKeyWatch(session, k));
    }

    final void checkUsable() {
        synchronized (lock) {
            if (lost != null) {
                throw lostException(kind + " " + prefix + " is unusable: " + lost.getMessage(), lost);
            }
            checkOpen();
        }
    }

    final void checkOpen() {
        synchronized (lock) {
            if (state == GrantState.CLOSED) {
                throw new IllegalStateException(kind + " service " + prefix + " is closed");
            }
        }
    }

    // ---------------------------------------------------------------- the held grant

    /** @return the held grant, or empty */
    public final Optional<G> held() {
        synchronized (lock) {
            return Optional.ofNullable(held == null ? null : held.grant());
        }
    }

    /** The CreateRevision of the held grant's key, or 0 when nothing is held. */
    final long heldCreateRevision() {
        synchronized (lock) {
            return held == null ? 0 : held.createRevision();
        }
    }

    /**
     * Replaces the held grant if it still belongs to the term (the key incarnation) whose key has
     * CreateRevision {@code createRevision}; a null {@code replacement} ends it. A term is identified
     * by its key's CreateRevision, never by the grant object, which a proclamation replaces.
     */
    final void replaceHeld(long createRevision, G replacement) {
        synchronized (lock) {
            if (held != null && held.createRevision() == createRevision) {
                if (replacement == null) {
                    move(GrantState.IDLE);
                    dropHeld();
                } else {
                    held = held.withGrant(replacement);
                }
            }
        }
    }

    /**
     * Releases the held grant, if any: deletes its key guarded by its CreateRevision (sent again on
     * another member while unanswered: a guarded delete is safe to repeat). {@code check} sees the
     * held grant first and may refuse (throw). If etcd fails or does not answer, the grant stays held
     * and the call can be retried. If the key was already gone (deleted by somebody else, or its lease
     * expired), or the service lost the grant before this call, the loss is thrown: a resumed zombie
     * learns here that it had lost. A retry after an unanswered release that finds the key gone
     * returns normally, since that earlier release may have deleted it; so does a release whose
     * copies (sent to several members) include one that may have deleted it, while the lease is valid.
     */
    final void release(String call, Consumer<G> check, String what) {
        SessionThread.refuseOnSessionThread(call);
        awaitAnswer(releasing(check, what), what, "still held, retry");
    }

    /** {@link #release} without blocking: the loss, or a refusal by {@code check}, fails the future; completes on the callback executor. */
    final CompletableFuture<Void> releaseAsync(Consumer<G> check, String what) {
        try {
            return toUser(releasing(check, what).thenApply(v -> v));
        } catch (RuntimeException e) {
            return toUser(CompletableFuture.failedFuture(e));
        }
    }

    /** Starts a release (see {@link #release}): throws at once what {@code check} or an earlier loss throws; the future completes on the session thread. */
    private CompletableFuture<Void> releasing(Consumer<G> check, String what) {
        G g;
        ByteSequence key;
        long rev;
        boolean retry;
        long heldSince;
        synchronized (lock) {
            if (unreleasedLoss != null) {
                throw lostException(kind + " " + prefix + ": the grant was lost before it was released: " + unreleasedLoss.getMessage(),
                        unreleasedLoss);
            }
            g = held == null ? null : held.grant();
            check.accept(g);
            if (g == null) {
                return CompletableFuture.completedFuture(null);
            }
            key = held.key();
            rev = held.createRevision();
            heldSince = held.sinceNanos();
            retry = state == GrantState.RELEASING; // an earlier release of this grant was sent and not answered
            if (!retry) {
                move(GrantState.RELEASING);
            }
        }
        Op[] also = releaseOps(g);
        AtomicInteger copies = new AtomicInteger();
        return session.rpc(what, () -> {
            copies.incrementAndGet();
            return GuardedDelete.send(session.client(), key, rev, also);
        }).thenApply(r -> {
            boolean stillHeld = heldCreateRevision() == rev; // false when the own key's watch saw the delete first
            replaceHeld(rev, null);
            // With more than one copy sent, "already gone" may mean that an earlier copy deleted it; while
            // the lease is valid, only a delete by somebody else at this very instant would be
            // misjudged, and it ended a grant that was being released anyway.
            boolean ours = retry || (copies.get() > 1 && !session.isLost());
            if (!r.isSucceeded() && !ours) {
                L loss;
                synchronized (lock) {
                    loss = lostException(kind + " " + prefix + " was lost before this release: its key " + key.toString(java.nio.charset.StandardCharsets.UTF_8)
                            + " (token " + rev + ") was already gone (its lease expired or was revoked, or somebody deleted it)", null);
                    if (lost == null && state != GrantState.CLOSED) {
                        lost = loss;
                        if (state == GrantState.IDLE) {
                            move(GrantState.LOST);
                        }
                    }
                }
                session.probeLease();
                finish();
                tellEnded(heldSince, loss);
                throw loss;
            }
            if (stillHeld) {
                tellEnded(heldSince, null);
            }
            return null;
        });
    }

    /** {@link #close()} without blocking the caller: run on the callback executor. */
    public final CompletableFuture<Void> closeAsync() {
        return CompletableFuture.runAsync(this::close, session.callbackExecutor());
    }

    /**
     * Waits, at most the request timeout, for the answer to one etcd request made by a blocking call.
     * Failures become a {@link DiscoException} naming the request; {@code ifUnanswered} tells the
     * caller what state it is left in when no answer came (for example "still held, retry").
     */
    final <T> T awaitAnswer(CompletableFuture<T> request, String what, String ifUnanswered) {
        String op = what + " of " + kind + " " + prefix;
        SessionThread.refuseOnSessionThread("the " + op);
        try {
            return session.await(request, session.requestTimeout().toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted during the " + op + "; " + ifUnanswered, e);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the " + op + " within "
                    + session.requestTimeout().toMillis() + " ms; " + ifUnanswered, e);
        } catch (ExecutionException e) {
            throw EtcdErrors.failure(op, e.getCause());
        }
    }

    /** Session thread. See {@link SessionMember#lateIncarnation}. */
    @Override
    public final CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision) {
        QueueClaim<G> claim;
        synchronized (lock) {
            if (held != null && held.key().equals(key) && held.createRevision() == createRevision) {
                return CompletableFuture.completedFuture(null);
            }
            claim = latest;
        }
        return claim != null && claim.ownKey.equals(key) ? claim.ownership(createRevision) : null;
    }

    // ---------------------------------------------------------------- lifetime

    public final CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public final Optional<L> err() {
        synchronized (lock) {
            return Optional.ofNullable(lost);
        }
    }

    /**
     * Releases what is held and withdraws a pending acquisition; revokes the session if the service
     * owns it (the keys go with the lease). When this returns, no key of this service is left in
     * etcd, unless etcd did not answer within the request timeout (the withdrawal then goes on in
     * the background until the session ends). A closed service never hands out a grant. Idempotent.
     */
    public void close() {
        SessionThread.refuseOnSessionThread(kind + " close()");
        QueueClaim<G> claim;
        ByteSequence key;
        long rev;
        Op[] also;
        synchronized (lock) {
            if (state == GrantState.CLOSED) {
                return;
            }
            move(GrantState.CLOSED);
            claim = latest;
            key = held == null ? null : held.key();
            rev = held == null ? 0 : held.createRevision();
            also = held == null ? NO_OPS : releaseOps(held.grant());
            if (held != null) {
                tellEnded(held.sinceNanos(), null);
            }
            dropHeld();
        }
        closing();
        if (ownsSession) {
            session.close();
        } else {
            CompletableFuture<Void> withdrawn = CompletableFuture.completedFuture(null);
            if (claim != null) {
                withdrawn = claim.abandon(new IllegalStateException(kind + " service " + prefix + " closed"));
            }
            if (key != null) {
                withdrawn = CompletableFuture.allOf(withdrawn, session.deleteOwnKey(key, rev, also));
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
        QueueClaim<G> claim;
        L loss;
        synchronized (lock) {
            loss = lostException(kind + " " + prefix + " lost: " + cause.getMessage(), cause);
            if (lost == null) {
                lost = loss;
            }
            if (state != GrantState.LOST && state != GrantState.CLOSED) {
                move(GrantState.LOST);
            }
            if (held != null) {
                tellEnded(held.sinceNanos(), loss);
                unreleasedLoss = lost;
            }
            dropHeld();
            claim = latest;
        }
        if (claim != null) {
            claim.abandon(loss);
        }
        finish();
    }

    @Override
    public final void sessionClosed() {
        QueueClaim<G> claim;
        synchronized (lock) {
            if (state != GrantState.CLOSED) {
                move(GrantState.CLOSED);
            }
            if (held != null) {
                tellEnded(held.sinceNanos(), null);
            }
            dropHeld();
            claim = latest;
        }
        if (claim != null) {
            claim.abandon(new IllegalStateException(kind + " service " + prefix + " closed: its session was closed"));
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
        return getClass().getSimpleName() + "{prefix=" + prefix + ", lease=" + session.leaseHex() + '}';
    }
}
