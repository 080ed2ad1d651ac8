package io.disco.provider.etcd;

import io.disco.client.Names;
import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Timeouts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import java.nio.charset.StandardCharsets;
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
    /**
     * The release whose outcome is not known yet, or null: from {@link GrantState#RELEASING} until its delete
     * is answered (the state may be {@code IDLE} meanwhile, once the own key's watch saw the key go), the
     * session ends or the service closes. Its {@code confirmed} fails with the loss when the key turned out to
     * be gone before the delete; an acquisition waits for it before it claims anew.
     */
    private Releasing release;
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

    /** The name rule of every backend and of the client ({@link Names#check}). */
    static String validPrefix(String prefix) {
        return Names.check(prefix, "prefix");
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
        return EtcdKeys.queue(dir) + session.leaseHex();
    }

    /** The service's lease-lost exception. */
    @Override
    abstract L lostException(String message, Throwable cause);

    /** Called when the service is closed (on the caller's thread) or its session is (on the closing thread). */
    void closing() {}

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
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    kind + " " + prefix + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        Object begun = begin(whenHeld, newClaim, false);
        return begun instanceof QueueClaim ? claim(begun).await(timeout) : grant(begun);
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
                    kind + " " + prefix + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        return tryAcquire(call, whenHeld, tryClaim)
                .orElseThrow(() -> new TimeoutException(kind + " " + prefix + ": not free now (a timeout of " + timeout
                        + " is one try, at once); this owner's claim was withdrawn"));
    }

    final Optional<G> tryAcquire(String call, UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        SessionThread.refuseOnSessionThread(call);
        Object begun = begin(whenHeld, newClaim, true);
        return Optional.ofNullable(begun instanceof QueueClaim ? claim(begun).join() : grant(begun));
    }

    /** The user's view of an acquisition: completes on the callback executor; cancelling it withdraws the claim. */
    final CompletableFuture<G> acquireAsync(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        Object begun = begin(whenHeld, newClaim, false);
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

    /**
     * A grant whose release is unconfirmed is never handed out again (issue 44): its token may be in a
     * delete that etcd applies at any moment, after which another owner is granted. So while a release
     * is unconfirmed ({@link #release}), a try-only acquisition finds it in the way (null, not
     * acquired) and any other claims anew once the release is confirmed, with a new key incarnation
     * and so a new token.
     *
     * @return the held grant's answer, a started claim, or null (try-only, a release unconfirmed)
     */
    private Object begin(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim, boolean tryOnly) {
        QueueClaim<G> claim;
        QueueClaim<G> previous;
        CompletableFuture<Void> releaseFirst = null;
        synchronized (lock) {
            checkUsable();
            if (release != null) {
                if (tryOnly) {
                    return null;
                }
                releaseFirst = release.confirmed();
            } else if (held != null) {
                return whenHeld.apply(held.grant());
            }
            if (latest != null && !latest.result.isDone()) {
                throw new IllegalStateException(
                        kind + " " + prefix + ": another acquisition of this service is in progress;"
                                + " one service is one owner (use one service per concurrent owner)");
            }
            previous = latest;
            claim = newClaim.get();
            latest = claim;
        }
        claim.startAfter(previous, releaseFirst == null ? null : releaseFirst.exceptionally(e -> null));
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
    final Throwable commit(
            G grant,
            ByteSequence ownKey,
            long createRevision,
            OwnKeyWatch.Following watch,
            long startedNanos,
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
                // The delete of a release of this grant, whose answer was lost or is still to come: the grant
                // has ended (held() follows the own key). The release is confirmed by its answer, which says
                // whether the delete was ours (sent again until etcd answers); until then nothing is granted.
                move(GrantState.IDLE);
                tellEnded(held.sinceNanos(), null);
                dropHeld();
                return;
            }
            if (session.isLost()) {
                return; // the lease is gone, and its keys with it: the session's loss tells this service
            }
            // The grant's own token: a key's create revision is the token of a lock or a writer only (a reader's
            // is its phase's, a permit's its slot's). Deleted by somebody else, or with the lease (expired or
            // revoked on the server before this process knew): the session asks which before it logs.
            String token = SessionCore.tokenText(held.grant());
            loss = lostException(
                    kind + " " + prefix + " lost: its key "
                            + held.key().toString(java.nio.charset.StandardCharsets.UTF_8) + token
                            + " was deleted while held",
                    null);
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

    /** @return the held grant, or empty (also while its release is unconfirmed: the grant is given up) */
    public final Optional<G> held() {
        synchronized (lock) {
            return Optional.ofNullable(held == null || state == GrantState.RELEASING ? null : held.grant());
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
     * held grant first and may refuse (throw). Not interruptible: an interrupted caller waits all the
     * same, at most the request timeout, and keeps its interrupt status.
     *
     * <p>The outcomes: etcd deletes the key (returns); etcd refuses the delete for good, a permission
     * taken away (the failure is thrown, the grant is still held and the call can be retried); the key
     * was already gone, deleted by somebody else or with the lease, or the service lost the grant
     * before this call (the loss is thrown: a resumed zombie learns here that it had lost); or no answer
     * within the request timeout. Then the outcome is unknown and the grant is given up at once
     * ({@link #held()} is empty, its token must not be used): the delete is sent again in the background
     * until etcd answers or the session ends, a {@link DiscoException} says so, and no grant is handed out
     * until the release is confirmed (see {@link #begin}). Calling this again waits for that same release.
     * A release whose copies (sent to several members) include one that may have deleted the key
     * returns normally when a later copy finds it gone, while the lease is valid.
     */
    final void release(String call, Consumer<G> check, String what) {
        SessionThread.refuseOnSessionThread(call);
        awaitRelease(releasing(check, what), what);
    }

    /**
     * One release of a held grant: {@code confirmed} completes when the grant is known ended (see
     * {@link #release}), {@code deleted} when etcd answered its delete, or the session ended.
     */
    private record Releasing(ByteSequence key, CompletableFuture<Void> confirmed, CompletableFuture<Void> deleted) {

        static final Releasing NONE =
                new Releasing(null, CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(null));

        /**
         * The delete's outcome is unknown: until etcd answers it, no claim of this session may create
         * (and so adopt) the key, whatever service makes it (a name's next service, after this one closed).
         */
        void guard(SessionCore session) {
            if (key != null && !deleted.isDone()) {
                session.runOnSession(() -> session.lateCreates().awaitDelete(key, deleted));
            }
        }
    }

    /** {@link #release} without blocking: the loss, or a refusal by {@code check}, fails the future; completes on the callback executor. */
    final CompletableFuture<Void> releaseAsync(Consumer<G> check, String what) {
        try {
            return toUser(releasing(check, what).confirmed().thenApply(v -> v));
        } catch (RuntimeException e) {
            return toUser(CompletableFuture.failedFuture(e));
        }
    }

    /**
     * Starts a release (see {@link #release}), or finds the unconfirmed one of this grant: throws at once
     * what {@code check} or an earlier loss throws; the future completes when the release is confirmed.
     */
    private Releasing releasing(Consumer<G> check, String what) {
        G g;
        ByteSequence key;
        long rev;
        long heldSince;
        Releasing pending;
        synchronized (lock) {
            if (unreleasedLoss != null) {
                throw lostException(
                        kind + " " + prefix + ": the grant was lost before it was released: "
                                + unreleasedLoss.getMessage(),
                        unreleasedLoss);
            }
            if (release != null) {
                return release; // an earlier release of this grant was sent and is not confirmed yet
            }
            g = held == null ? null : held.grant();
            check.accept(g);
            if (g == null) {
                return Releasing.NONE;
            }
            key = held.key();
            rev = held.createRevision();
            heldSince = held.sinceNanos();
            move(GrantState.RELEASING);
            release = pending = new Releasing(held.key(), new CompletableFuture<>(), new CompletableFuture<>());
        }
        Op[] also = releaseOps(g);
        AtomicInteger copies = new AtomicInteger();
        Supplier<CompletableFuture<TxnResponse>> delete = () -> {
            copies.incrementAndGet();
            return GuardedDelete.send(session.client(), key, rev, also);
        };
        session.rpc(what, delete).whenComplete((r, e) -> {
            if (e == null) {
                answered(pending, r, key, rev, heldSince, copies.get());
                pending.deleted().complete(null);
            } else if (!EtcdErrors.isTransient(e)) {
                pending.deleted().complete(null);
                refused(pending, rev, EtcdErrors.failure(what + " of " + kind + " " + prefix, EtcdErrors.unwrap(e)));
            } else {
                // The outcome is unknown: a copy may be applied at any moment. Sent again until etcd answers.
                pending.guard(session);
                session.untilAnswered(what, delete).whenComplete((later, le) -> {
                    if (later != null) {
                        answered(pending, later, key, rev, heldSince, copies.get());
                    } // else the session ended: sessionLost or sessionClosed confirmed the release
                    pending.deleted().complete(null);
                });
            }
        });
        return pending;
    }

    /**
     * The answer to the release of the grant created at {@code rev}: deleted, or found gone. It confirms the
     * release (the own key's watch may have ended the grant already, but only the answer tells whether the
     * delete was ours), unless the session's end or a close did first.
     */
    private void answered(Releasing pending, TxnResponse r, ByteSequence key, long rev, long heldSince, int copies) {
        // With more than one copy sent, "already gone" may mean that an earlier copy deleted it; while
        // the lease is valid, only a delete by somebody else at this very instant would be misjudged,
        // and it ended a grant that was being released anyway.
        boolean ours = r.isSucceeded() || (copies > 1 && !session.isLost());
        L loss = null;
        boolean endedNow = false;
        synchronized (lock) {
            if (release != pending) {
                return; // confirmed already: the session ended, or the service was closed
            }
            if (state == GrantState.RELEASING && held.createRevision() == rev) {
                move(GrantState.IDLE);
                dropHeld();
                endedNow = true;
            }
            if (!ours) {
                loss = lostException(
                        kind + " " + prefix + " was lost before this release: its key "
                                + key.toString(StandardCharsets.UTF_8) + " (created at revision " + rev
                                + ") was already gone (its lease expired or was revoked, or somebody deleted it)",
                        null);
                if (lost == null && state == GrantState.IDLE) {
                    lost = loss;
                    move(GrantState.LOST);
                }
            }
            releaseConfirmed(loss);
        }
        if (endedNow || loss != null) {
            tellEnded(heldSince, loss);
        }
        if (loss != null) {
            session.probeLease();
            finish();
        }
    }

    /**
     * etcd refused the delete for good (a permission taken away): nothing was deleted, the grant is held again
     * and the failure is thrown to the releaser. If the key went meanwhile all the same (seen by its watch), the
     * release is confirmed with the failure.
     */
    private void refused(Releasing pending, long rev, DiscoException failure) {
        CompletableFuture<Void> waiters;
        synchronized (lock) {
            if (release != pending) {
                return;
            }
            if (state == GrantState.RELEASING && held.createRevision() == rev) {
                move(GrantState.HELD);
            }
            waiters = release.confirmed();
            release = null;
        }
        waiters.completeExceptionally(failure);
    }

    /** Under the lock: the pending release is confirmed (answered, or the session or the service ended); {@code loss} fails its waiters. */
    private void releaseConfirmed(L loss) {
        assert Thread.holdsLock(lock);
        CompletableFuture<Void> pending = release == null ? null : release.confirmed();
        release = null;
        if (pending != null) {
            session.deliver(() -> {
                if (loss == null) {
                    pending.complete(null);
                } else {
                    pending.completeExceptionally(loss);
                }
            });
        }
    }

    /** {@link #close()} without blocking the caller: run on the callback executor. */
    public final CompletableFuture<Void> closeAsync() {
        return CompletableFuture.runAsync(this::close, session.callbackExecutor());
    }

    /**
     * Waits for a release, at most the request timeout and uninterruptibly: an interrupted caller
     * (every cancelled task's {@code finally { unlock(); }}) completes its release all the same and
     * keeps its interrupt status. Failures become a {@link DiscoException} naming the release, its loss
     * is thrown as it is, and no answer in time says what is known.
     */
    private void awaitRelease(Releasing releasing, String what) {
        CompletableFuture<Void> request = releasing.confirmed();
        String op = what + " of " + kind + " " + prefix;
        long deadline = System.nanoTime() + session.requestTimeout().toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    session.await(request, Math.max(0, deadline - System.nanoTime()));
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // wait on: a release is not given up half-way
                } catch (TimeoutException e) {
                    releasing.guard(
                            session); // before any other claim of this session can start (it waits for this thread)
                    throw new DiscoException(
                            "etcd could not be reached: no answer to the " + op + " within "
                                    + session.requestTimeout().toMillis()
                                    + " ms. The grant is given up: this owner no longer holds"
                                    + " it and its token must not be used; the delete of its key is sent again until etcd answers or"
                                    + " the lease ends, and this owner is granted nothing before it is confirmed (the next acquisition"
                                    + " waits for it, then claims anew with a new token)",
                            e);
                } catch (ExecutionException e) {
                    Throwable cause = EtcdErrors.unwrap(e.getCause());
                    if (cause instanceof DiscoException d) {
                        throw d;
                    }
                    throw EtcdErrors.failure(op, cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
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
            throw new DiscoException(
                    "etcd could not be reached: no answer to the " + op + " within "
                            + session.requestTimeout().toMillis() + " ms; " + ifUnanswered,
                    e);
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
            key = held == null || release != null ? null : held.key(); // a pending release deletes its key already
            rev = held == null ? 0 : held.createRevision();
            also = held == null ? NO_OPS : releaseOps(held.grant());
            if (held != null && release == null) {
                tellEnded(held.sinceNanos(), null);
            }
            dropHeld();
            releaseConfirmed(null); // the close deletes the key, like the release it replaces
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
                if (release == null) {
                    unreleasedLoss = lost;
                }
            }
            releaseConfirmed(loss); // a release given up before it was confirmed: its waiters learn the loss
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
            if (held != null && release == null) {
                tellEnded(held.sinceNanos(), null);
            }
            dropHeld();
            releaseConfirmed(null); // the lease is revoked: the key is gone with it
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
