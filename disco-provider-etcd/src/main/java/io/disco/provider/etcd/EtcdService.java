package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * What the lock, read/write lock and election services share: one owner per service on one
 * session's lease, the held grant, at most one acquisition in flight, release, loss and close.
 *
 * <p>State is guarded by the service's monitor; {@link QueueClaim} commits under it too.
 *
 * @param <G> the grant type
 * @param <L> the service's "lease lost" exception
 */
abstract class EtcdService<G, L extends DiscoException> implements EtcdSession.Member {

    final EtcdSession session;
    final String prefix;
    /** What the service is called in messages: "lock", "read/write lock", "election". */
    final String kind;
    private final boolean ownsSession;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    // Guarded by this.
    private G held;
    private ByteSequence heldKey;
    private long heldCreateRevision;
    private QueueClaim<G> latest;
    private boolean closed;
    private L lost;

    EtcdService(EtcdSession session, String prefix, String kind, boolean ownsSession) {
        this.session = Objects.requireNonNull(session, "session");
        this.prefix = validPrefix(prefix);
        this.kind = kind;
        this.ownsSession = ownsSession;
    }

    /** Registers the service on its session: one per (session, prefix). */
    static <S extends EtcdService<?, ?>> S register(S service) {
        service.session.register(service.prefix, service);
        return service;
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

    /** This session's key under {@code dir}: {@code <dir>/<lease id in hex>}, as etcd's Go recipes name it. */
    final String leaseKey(String dir) {
        return dir + "/" + EtcdSession.hex(session.leaseId());
    }

    /** The service's lease-lost exception. */
    abstract L lostException(String message, Throwable cause);

    /** Called when the service is closed (on the caller's thread) or its session is (on the session thread). */
    void closing(boolean onSessionThread) {
    }

    // ---------------------------------------------------------------- acquiring

    /**
     * Blocking acquire. {@code whenHeld} maps the held grant to the answer (or throws when it does not
     * fit the request); otherwise a new claim from {@code newClaim} runs.
     */
    final G acquire(Duration timeout, UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim)
            throws InterruptedException, TimeoutException {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        Object begun = begin(whenHeld, newClaim);
        return begun instanceof QueueClaim ? claim(begun).await(timeout) : grant(begun);
    }

    final Optional<G> tryAcquire(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        Object begun = begin(whenHeld, newClaim);
        return Optional.ofNullable(begun instanceof QueueClaim ? claim(begun).join() : grant(begun));
    }

    final CompletableFuture<G> acquireAsync(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        Object begun = begin(whenHeld, newClaim);
        return begun instanceof QueueClaim ? claim(begun).result : CompletableFuture.completedFuture(grant(begun));
    }

    /** @return the held grant's answer, or a started claim */
    private Object begin(UnaryOperator<G> whenHeld, Supplier<QueueClaim<G>> newClaim) {
        QueueClaim<G> claim;
        QueueClaim<G> previous;
        synchronized (this) {
            checkUsable();
            if (held != null) {
                return whenHeld.apply(held);
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

    /** Records an acquisition; called by the claim under this monitor. */
    final void commit(QueueClaim<G> claim, G grant, long createRevision) {
        assert Thread.holdsLock(this);
        held = grant;
        heldKey = claim.ownKey;
        heldCreateRevision = createRevision;
    }

    final synchronized void checkUsable() {
        if (lost != null) {
            throw lostException(kind + " " + prefix + " is unusable: " + lost.getMessage(), lost);
        }
        checkOpen();
    }

    final synchronized void checkOpen() {
        if (closed) {
            throw new IllegalStateException(kind + " service " + prefix + " is closed");
        }
    }

    // ---------------------------------------------------------------- the held grant

    /** @return the held grant, or empty */
    public final synchronized Optional<G> held() {
        return Optional.ofNullable(held);
    }

    /** The CreateRevision of the held grant's key; meaningful only while {@code held} is. */
    final synchronized long heldCreateRevision() {
        return heldCreateRevision;
    }

    /** Replaces the held grant if it is still {@code expected} (a proclamation). */
    final synchronized void replaceHeld(G expected, G replacement) {
        if (held == expected) {
            held = replacement;
        }
    }

    /**
     * Releases the held grant, if any: deletes its key guarded by its CreateRevision. {@code check}
     * sees the held grant first and may refuse (throw). If etcd fails or does not answer, the grant
     * stays held and the call can be retried.
     */
    final void release(Consumer<G> check, String what) {
        G g;
        ByteSequence key;
        long rev;
        synchronized (this) {
            g = held;
            key = heldKey;
            rev = heldCreateRevision;
            check.accept(g);
        }
        if (g == null) {
            return;
        }
        awaitAnswer(QueueClaim.guardedDelete(session, key, rev), what, "still held, retry");
        replaceHeld(g, null);
    }

    /**
     * Waits, at most the request timeout, for the answer to one etcd request made by a blocking call.
     * Failures become a {@link DiscoException} naming the request; {@code ifUnanswered} tells the
     * caller what state it is left in when no answer came (for example "still held, retry").
     */
    final <T> T awaitAnswer(CompletableFuture<T> request, String what, String ifUnanswered) {
        String op = what + " of " + kind + " " + prefix;
        try {
            return request.get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted during the " + op + "; " + ifUnanswered, e);
        } catch (TimeoutException e) {
            throw new DiscoException("etcd could not be reached: no answer to the " + op + " within "
                    + session.requestTimeout().toMillis() + " ms; " + ifUnanswered, e);
        } catch (ExecutionException e) {
            throw EtcdSession.failure(op, e.getCause());
        }
    }

    // ---------------------------------------------------------------- lifetime

    public final CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public final synchronized Optional<L> err() {
        return Optional.ofNullable(lost);
    }

    /**
     * Releases what is held and withdraws a pending acquisition; revokes the session if the service
     * owns it (the keys go with the lease). Idempotent.
     */
    public void close() {
        QueueClaim<G> claim;
        ByteSequence key;
        long rev;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            claim = latest;
            key = held == null ? null : heldKey;
            rev = heldCreateRevision;
            held = null;
        }
        closing(false);
        if (ownsSession) {
            session.close();
        } else {
            if (claim != null) {
                claim.abandon(new IllegalStateException(kind + " service " + prefix + " closed"));
            }
            if (key != null) {
                try {
                    QueueClaim.deleteOwnKey(session, key, rev).get(session.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
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
    public final void sessionLost(DiscoException cause) {
        QueueClaim<G> claim;
        L loss;
        synchronized (this) {
            loss = lostException(kind + " " + prefix + " lost: " + cause.getMessage(), cause);
            lost = loss;
            held = null;
            claim = latest;
        }
        if (claim != null) {
            claim.giveUp(loss);
        }
        finish();
    }

    @Override
    public final void sessionClosed() {
        QueueClaim<G> claim;
        synchronized (this) {
            closed = true;
            held = null;
            claim = latest;
        }
        if (claim != null) {
            claim.giveUp(new IllegalStateException(kind + " service " + prefix + " closed: its session was closed"));
        }
        closing(true);
        finish();
    }

    private void finish() {
        ForkJoinPool.commonPool().execute(() -> done.complete(null));
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{prefix=" + prefix + ", lease=" + EtcdSession.hex(session.leaseId()) + '}';
    }
}
