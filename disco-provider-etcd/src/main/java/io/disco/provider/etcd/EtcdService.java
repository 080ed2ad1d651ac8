package io.disco.provider.etcd;

import io.disco.client.Names;
import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Timeouts;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Op;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * What the lock, read/write lock, semaphore and election services share, on top of their
 * {@link GrantLedger} (where the grant stands) and {@link GrantRelease} (its release): one owner per
 * service on one session's lease, at most one acquisition in flight, and the service's lifetime. Its
 * duties: start an acquisition ({@link QueueClaim}) after the previous one has withdrawn and an unconfirmed
 * release is confirmed, or answer with the held grant; wait for it as the caller asked (blocking, bounded,
 * try-only, asynchronous); register the service on its session and take part in the session's endings
 * ({@link SessionMember}); close. A primitive (one file each) supplies its keys, its claim and its grant.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class EtcdService<G, L extends DiscoException> extends GrantRelease<G, L> implements SessionMember {

    private final boolean ownsSession;

    EtcdService(SessionCore session, String prefix, String kind, boolean ownsSession) {
        super(Objects.requireNonNull(session, "session"), validPrefix(prefix), kind);
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

    /** This session's key under {@code dir}: {@code <dir>/<lease id in hex>}, as etcd's Go recipes name it. */
    final String leaseKey(String dir) {
        return EtcdKeys.queue(dir) + session.leaseHex();
    }

    /** Called when the service is closed (on the caller's thread) or its session is (on the closing thread). */
    void closing() {}

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
        return begun instanceof QueueClaim ? new ClaimCaller<>(claim(begun)).await(timeout) : grant(begun);
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
        return Optional.ofNullable(begun instanceof QueueClaim ? new ClaimCaller<>(claim(begun)).join() : grant(begun));
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
            throw new DiscoException(
                    "etcd could not be reached: no answer to the " + op + " within "
                            + session.requestTimeout().toMillis() + " ms; " + ifUnanswered,
                    e);
        } catch (ExecutionException e) {
            throw EtcdErrors.failure(op, e.getCause());
        }
    }

    // ---------------------------------------------------------------- lifetime

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

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{prefix=" + prefix + ", lease=" + session.leaseHex() + '}';
    }
}
