package io.disco.provider.redis;

import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.core.internal.grant.CallerWait;
import io.disco.core.internal.grant.GrantEvents;
import io.disco.core.internal.grant.GrantLedger;
import io.disco.core.internal.session.SessionMember;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * What every queue service on a session shares (the lock, the read/write lock, the semaphore, the election): one
 * owner per service, one acquisition at a time, the held grant, release, loss and close; a primitive supplies only
 * its hooks ({@link ClaimProtocol}). An acquisition ({@link QueueClaim}) is begun in the shared {@link GrantLedger},
 * run by a worker ({@link ClaimWorker}) and waited for by a synchronous caller ({@link CallerWait}); its grant is
 * committed here; its claim's deletion by anybody else, or expiry, found by a renewal, a break's message or a
 * re-check, is the loss ({@link GrantLoss}); a release gives the grant up at once and is confirmed in the background
 * when its answer is late ({@link GrantRelease}, {@link ClaimRelease}); a close gives up what is held or pending. It
 * sees its session only as a {@link SessionCore} and is told of the session's end as a {@link SessionMember}.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
abstract class RedisQueueService<G extends Fenced, E extends DiscoException> extends AttemptOwner<G>
        implements SessionMember {

    final SessionCore core;
    private final GrantLedger<G, HeldClaim<G>, QueueClaim<G>, ClaimRelease<G>, E> ledger;
    private final GrantLoss<G, E> loss;
    private final GrantRelease<G, E> releases;
    private final GrantEvents events;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** The acquisition in progress, whose claim's loss is this service's too. */
    private volatile QueueClaim<G> current;

    RedisQueueService(SessionCore core, String name, Primitive primitive, String what) {
        super(name, what);
        this.core = core;
        this.ledger = new GrantLedger<>("the " + what + " on " + name);
        this.events = new GrantEvents(core.events(), core.front(), primitive, name);
        this.loss = new GrantLoss<>(core, this, ledger, this, this::lostException, done, events);
        this.releases = new GrantRelease<>(core, this, ledger, loss, events);
    }

    /** @return the loss of this kind of service */
    abstract E lostException(String message, Throwable cause);

    // ------------------------------------------------------------------ acquiring

    /**
     * An acquisition; {@code timeout} null waits without a limit, otherwise the rule of {@link Timeouts}: zero or
     * less is one try, a {@link TimeoutException} if somebody is in the way; a timeout too long to count in
     * nanoseconds waits without a limit. A thread interrupted on entry claims nothing.
     */
    final G acquire(ClaimKind kind, Duration timeout, String call, String value)
            throws InterruptedException, TimeoutException {
        SessionThread.refuseOnSessionThread(call);
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    "the " + what() + " on " + name + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        if (timeout != null && Timeouts.tryOnly(timeout)) {
            return CallerWait.awaitTry(this, start(kind, true, value), call)
                    .orElseThrow(() -> new TimeoutException("the " + what() + " on " + name
                            + " is not free now (a timeout of " + timeout + " is one try, at once); this owner's"
                            + " claim was withdrawn"));
        }
        return CallerWait.await(
                this, start(kind, false, value), timeout == null || Timeouts.unlimited(timeout) ? null : timeout);
    }

    final Duration requireTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout");
    }

    final Optional<G> tryAcquire(ClaimKind kind, String call, String value) {
        SessionThread.refuseOnSessionThread(call);
        return CallerWait.awaitTry(this, start(kind, true, value), call);
    }

    final CompletableFuture<G> acquireAsync(ClaimKind kind, String value) {
        QueueClaim<G> a;
        try {
            a = start(kind, false, value);
        } catch (DiscoException e) {
            UserFuture<G> failed = new UserFuture<>(core.callbackExecutor(), null);
            core.deliver(() -> failed.answer(null, e));
            return failed;
        }
        UserFuture<G> user = new UserFuture<>(core.callbackExecutor(), a.future);
        a.future.whenComplete((g, e) -> core.deliver(() -> user.answer(g, e)));
        return user;
    }

    private QueueClaim<G> start(ClaimKind kind, boolean tryOnly, String value) {
        QueueClaim<G> a = new QueueClaim<>(name, kind, tryOnly, value, core.claimData());
        GrantLedger.Begun<ClaimRelease<G>> begun = ledger.begin(a, held -> {
            if (held.kind() != kind) {
                throw new IllegalStateException("this service holds a " + modeName(held.kind()) + " grant of the "
                        + what() + " on " + name + ": there is no upgrade or downgrade; release it first");
            }
        });
        ClaimRelease<G> releaseFirst = begun.releaseFirst();
        if (releaseFirst != null) {
            releaseFirst.nudge(); // the acquisition wants it confirmed: no back-off
        }
        if (begun.answered()) {
            return a; // with the held grant, or a try that found the release in the way
        }
        current = a;
        core.track(a.withdrawn);
        a.future.whenComplete((g, e) -> onAttemptEnd(a, g, e));
        try {
            ClaimWorker.start(this, a);
        } catch (RejectedExecutionException e) {
            a.withdrawn.complete(null);
            a.future.completeExceptionally(
                    new IllegalStateException("the session of the " + what() + " on " + name + " is closed", e));
        }
        return a;
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one, and the worker withdraws. */
    private void onAttemptEnd(QueueClaim<G> a, G g, Throwable e) {
        if (e == null && g != null) {
            return; // committed
        }
        if (e != null) {
            events.acquisitionFailed(e, a.startedNanos);
        }
        ledger.acquisitionEnded(a);
        a.wake.release();
    }

    // ------------------------------------------------------------------ what the acquire machine sees

    @Override
    final SessionCore core() {
        return core;
    }

    @Override
    public final boolean releaseUnconfirmed() {
        return ledger.releaseUnconfirmed();
    }

    @Override
    final boolean commit(QueueClaim<G> a, G grant, String tokenText) {
        HeldClaim<G> held = new HeldClaim<>(grant, a.kind, a.key, a.id, tokenText, System.nanoTime());
        FencingToken token = GrantEvents.tokenOf(grant);
        a.beforeHandOver = () -> events.acquired(token, a.grantKey, a.startedNanos, held.sinceNanos());
        a.handOverUndone = () -> events.ended(held.sinceNanos(), null);
        return ledger.commit(a, held);
    }

    @Override
    final void claimGone(String key, String reason) {
        core.onSessionThread(() -> {
            QueueClaim<G> a = current;
            loss.claimGone(key, a == null || a.future.isDone() ? null : a.key, reason);
        });
    }

    /**
     * The held claim {@code key} was found gone by the calling thread's own request (a proclamation): the loss, before
     * the caller is answered, so that {@code held()} is empty when it is (as on ZooKeeper).
     */
    final void heldClaimGone(String key, String reason) {
        loss.claimGone(key, null, reason);
    }

    @Override
    final void lose(String reason, Throwable cause) {
        loss.lose(reason, cause);
    }

    @Override
    final E lost(String reason, Throwable cause) {
        return loss.lost(reason, cause);
    }

    // ------------------------------------------------------------------ the held claim

    /**
     * Replaces the held grant by {@code next} if {@code current} is still the held grant (an election's
     * proclamation: the same term with a new value).
     *
     * @return whether it was replaced
     */
    final boolean replaceHeld(G current, G next) {
        return ledger.replace(held -> held.grant() == current, held -> held.withGrant(next));
    }

    /** @return the held claim, or null */
    final HeldClaim<G> heldClaim() {
        return ledger.heldIf(h -> true);
    }

    /** @return whether the service is closed */
    final boolean closed() {
        return ledger.closed();
    }

    // ------------------------------------------------------------------ releasing

    final void release(ClaimKind kind, String call) {
        releases.release(kind, call);
    }

    final CompletableFuture<Void> releaseAsync(ClaimKind kind, String call) {
        return core.inBackground(() -> release(kind, call));
    }

    final <T> CompletableFuture<T> supplyInBackground(Supplier<T> task) {
        return core.supplyInBackground(task);
    }

    // ------------------------------------------------------------------ the service's state and end

    public Optional<G> held() {
        return ledger.held();
    }

    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public Optional<E> err() {
        return ledger.loss();
    }

    public CompletableFuture<Void> closeAsync() {
        return core.inBackground(this::close);
    }

    /** Gives up what is held (its release sent) and what is pending (withdrawn), leaves the session, finishes. */
    public void close() {
        GrantLedger.Closing<QueueClaim<G>, ClaimRelease<G>> closing = ledger.close(
                held -> releases.newRelease(held, "close()"), held -> core.deleteInBackground(name, held.id()));
        if (closing == null) {
            return;
        }
        core.unregister(this);
        QueueClaim<G> a = closing.acquisition();
        if (a != null) {
            a.future.completeExceptionally(new IllegalStateException("the " + what() + " on " + name + " was closed"));
            a.wake.release();
            if (!SessionThread.onSessionThread()) {
                a.awaitWithdrawn(core.requestTimeout());
            }
        }
        if (closing.release() != null) {
            releases.onClose(closing.release(), closing.first());
        }
        core.deliver(() -> done.complete(null));
    }

    @Override
    public void sessionLost(String reason, Throwable cause) {
        loss.lose("the Redis session was lost: " + reason, cause);
    }

    @Override
    public void sessionClosed() {
        close();
    }

    @Override
    public String toString() {
        return "Redis " + what() + " on " + name + " (" + ledger.describe() + ")";
    }
}
