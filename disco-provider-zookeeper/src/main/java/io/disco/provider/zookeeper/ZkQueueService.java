package io.disco.provider.zookeeper;

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
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.KeeperException;

/**
 * What every queue service on a session shares (the lock, the read/write lock, the semaphore, the election): one
 * owner per service, one acquisition at a time, the held grant, release, loss and close; a primitive supplies
 * only its hooks ({@link QueueProtocol}). The service's own duties are its calls: an acquisition ({@link QueueAttempt})
 * is begun in its {@link GrantLedger}, run by a worker ({@link QueueWorker}) and waited for by a synchronous caller
 * ({@link CallerWait}); its grant is committed here and its node watched, whose deletion by anybody else is the
 * loss ({@link GrantLoss}); a release gives the grant up at once and is confirmed in the background when its answer
 * is late ({@link GrantRelease}, {@link QueueRelease}); a close gives up what is held or pending. It sees its
 * session only as a {@link SessionCore} and is told of the session's end as a {@link SessionMember}.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
abstract class ZkQueueService<G extends Fenced, E extends DiscoException> extends AttemptOwner<G>
        implements SessionMember, QueueAttempt.OwnNodeEvents {

    private static final byte[] NO_DATA = new byte[0];

    final SessionCore core;
    private final GrantLedger<G, HeldGrant<G>, QueueAttempt<G>, QueueRelease<G>, E> ledger;
    private final GrantLoss<G, E> loss;
    private final GrantRelease<G, E> releases;
    private final GrantEvents events;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    /**
     * @param what what the primitive is, for messages: "lock", "read/write lock", "semaphore", "election"
     */
    ZkQueueService(SessionCore core, String name, Primitive primitive, String what) {
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

    final G acquire(NodeKind kind, Duration timeout, String call) throws InterruptedException, TimeoutException {
        return acquire(kind, timeout, call, NO_DATA);
    }

    /**
     * An acquisition; {@code timeout} null waits without a limit, otherwise the rule of {@link Timeouts}: zero or
     * less is one try (as the try-method makes it), a {@link TimeoutException} if somebody is in the way; a timeout
     * too long to count in nanoseconds waits without a limit. A thread interrupted on entry claims nothing.
     */
    final G acquire(NodeKind kind, Duration timeout, String call, byte[] data)
            throws InterruptedException, TimeoutException {
        SessionThread.refuseOnSessionThread(call);
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    "the " + what() + " on " + name + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        if (timeout != null && Timeouts.tryOnly(timeout)) {
            return CallerWait.awaitTry(this, start(kind, true, data), call)
                    .orElseThrow(() -> new TimeoutException("the "
                            + what() + " on " + name + " is not free now (a timeout of " + timeout
                            + " is one try, at once); this"
                            + " owner's claim was withdrawn"));
        }
        return CallerWait.await(
                this, start(kind, false, data), timeout == null || Timeouts.unlimited(timeout) ? null : timeout);
    }

    final Duration requireTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout");
    }

    final Optional<G> tryAcquire(NodeKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        return CallerWait.awaitTry(this, start(kind, true, NO_DATA), call);
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind) {
        return acquireAsync(kind, NO_DATA);
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind, byte[] data) {
        QueueAttempt<G> a;
        try {
            a = start(kind, false, data);
        } catch (DiscoException e) {
            UserFuture<G> failed = new UserFuture<>(core.callbackExecutor(), null);
            core.deliver(() -> failed.answer(null, e));
            return failed;
        }
        UserFuture<G> user = new UserFuture<>(core.callbackExecutor(), a.future);
        a.future.whenComplete((g, e) -> core.deliver(() -> user.answer(g, e)));
        return user;
    }

    private QueueAttempt<G> start(NodeKind kind, boolean tryOnly, byte[] data) {
        QueueAttempt<G> a = new QueueAttempt<>(this, kind, tryOnly, data);
        GrantLedger.Begun<QueueRelease<G>> begun = ledger.begin(a, held -> {
            if (held.kind() != kind) {
                throw new IllegalStateException("this service holds a " + modeName(held.kind()) + " grant of the "
                        + what() + " on " + name + ": there is no upgrade or downgrade; release it first");
            }
        });
        QueueRelease<G> releaseFirst = begun.releaseFirst();
        if (releaseFirst != null) {
            releaseFirst.nudge(); // the acquisition wants it confirmed: no back-off
        }
        if (begun.answered()) {
            return a; // with the held grant, or a try that found the release in the way
        }
        a.future.whenComplete((g, e) -> onAttemptEnd(a, g, e));
        try {
            core.work(new QueueWorker<>(this, a));
        } catch (RejectedExecutionException e) {
            a.withdrawn.complete(null);
            a.future.completeExceptionally(
                    new IllegalStateException("the session of the " + what() + " on " + name + " is closed", e));
        }
        return a;
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one, and the worker withdraws. */
    private void onAttemptEnd(QueueAttempt<G> a, G g, Throwable e) {
        if (e == null && g != null) {
            return; // committed
        }
        if (e != null) {
            events.acquisitionFailed(e, a.startedNanos); // not a try that found the grant taken
        }
        ledger.acquisitionEnded(a);
        a.wake.release();
    }

    // ------------------------------------------------------------------ what the acquire machine sees (AttemptOwner)

    @Override
    final SessionCore core() {
        return core;
    }

    @Override
    public final boolean releaseUnconfirmed() {
        return ledger.releaseUnconfirmed();
    }

    @Override
    final boolean commit(QueueAttempt<G> a, G grant) {
        HeldGrant<G> held = new HeldGrant<>(grant, a.kind, a.node, a.watcher, System.nanoTime());
        FencingToken token = GrantEvents.tokenOf(grant);
        a.beforeHandOver = () -> events.acquired(token, a.node, a.startedNanos, held.sinceNanos());
        a.handOverUndone = () -> events.ended(held.sinceNanos(), null);
        if (!ledger.commit(a, held)) {
            return false;
        }
        watchHeld(a.node, a.watcher);
        return true;
    }

    @Override
    final void lose(String reason, Throwable cause) {
        loss.lose(reason, cause);
    }

    @Override
    final E lost(String reason, Throwable cause) {
        return loss.lost(reason, cause);
    }

    @Override
    final DiscoException zkFailure(String doing, Exception e) {
        return core.failure(doing + " the " + what() + " on " + name, e);
    }

    // ------------------------------------------------------------------ the held node

    /**
     * Watches the held node off the acquisition's path: its deletion by anybody else is the loss (and so is
     * finding it gone already).
     */
    private void watchHeld(String node, CuratorWatcher watcher) {
        try {
            core.client()
                    .checkExists()
                    .usingWatcher(watcher)
                    .inBackground((c, event) -> {
                        if (event.getResultCode() == KeeperException.Code.OK.intValue() && event.getStat() == null
                                || event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                            core.onSessionThread(() -> loss.ownNodeDeleted(node));
                        }
                    })
                    .forPath(node);
        } catch (Exception e) {
            // the client is closing: the session's end is reported by the session
        }
    }

    @Override
    public final void ownNodeDeleted(String node) {
        core.onSessionThread(() -> loss.ownNodeDeleted(node));
    }

    @Override
    public final void ownNodeChanged(String node) {
        core.onSessionThread(() -> {
            HeldGrant<G> h = ledger.heldIf(held -> node.equals(held.node()));
            if (h != null) {
                watchHeld(h.node(), h.watcher());
            }
        });
    }

    /**
     * Replaces the held grant by {@code next} if {@code current} is still the held grant (an election's
     * proclamation: the same term with a new value).
     *
     * @return whether it was replaced
     */
    final boolean replaceHeld(G current, G next) {
        return ledger.replace(held -> held.grant() == current, held -> held.withGrant(next));
    }

    /** @return the held node's name, or null */
    final String heldNode() {
        HeldGrant<G> held = ledger.heldIf(h -> true);
        return held == null ? null : held.node();
    }

    /** Reports the held node as deleted by somebody else, if it is (found by a caller's failed write). */
    final void heldNodeGone(String node) {
        loss.ownNodeDeleted(node);
    }

    /** @return whether the service is closed */
    final boolean closed() {
        return ledger.closed();
    }

    // ------------------------------------------------------------------ releasing

    /** Releases the held grant of {@code kind} (see {@link GrantRelease#release}). */
    final void release(NodeKind kind, String call) {
        releases.release(kind, call);
    }

    final CompletableFuture<Void> releaseAsync(NodeKind kind, String call) {
        return core.inBackground(() -> release(kind, call));
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
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
        GrantLedger.Closing<QueueAttempt<G>, QueueRelease<G>> closing = ledger.close(
                held -> releases.newRelease(held, "close()"), held -> core.deleteInBackground(held.node()));
        if (closing == null) {
            return;
        }
        core.unregister(this);
        QueueAttempt<G> a = closing.acquisition();
        if (a != null) {
            a.future.completeExceptionally(new IllegalStateException("the " + what() + " on " + name + " was closed"));
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
        loss.lose("the ZooKeeper session was lost: " + reason, cause);
    }

    @Override
    public void sessionClosed() {
        close();
    }

    @Override
    public String toString() {
        return "ZooKeeper " + what() + " on " + name + " (" + ledger.describe() + ")";
    }
}
