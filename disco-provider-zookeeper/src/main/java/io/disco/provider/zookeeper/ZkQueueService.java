package io.disco.provider.zookeeper;

import io.disco.core.internal.SessionThread;
import io.disco.core.internal.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * What every queue-based service on a {@link ZooKeeperSession} shares (the lock, the read/write lock, the
 * semaphore, the election): the grant's state machine ({@link LockState}) with one acquisition at a time, its
 * commit, release, close and loss. An acquisition ({@link QueueAttempt}) is run by a worker ({@link QueueWorker})
 * that alone creates its own ephemeral-sequential node and checks its ephemeral owner ({@link OwnNode}: a node
 * left by an earlier session of the same client, CURATOR-604, is deleted and never used), waits on the node the
 * subclass names until it names none, then has the subclass make the grant and commits it here, unless it was
 * given up meanwhile; every other way out withdraws the node ({@link QueueNodes}) before a synchronous call
 * returns ({@link QueueCaller}). A held node deleted by anybody else, or the session's loss, is the loss of the
 * service. A release gives the grant up at once and is confirmed in the background when its answer is late
 * ({@link QueueRelease}); the service hands nothing out until it is.
 *
 * @param <G> the grant
 * @param <E> the loss
 */
abstract class ZkQueueService<G extends Fenced, E extends DiscoException> implements SessionMember {

    private static final byte[] NO_DATA = new byte[0];

    final ZooKeeperSession session;
    final String path;
    private final Object mon = new Object();
    private LockState state = LockState.IDLE;
    private QueueAttempt<G> pending;
    private G held;
    private NodeKind heldKind;
    private String heldNode;
    /**
     * The release of the last grant while it is unconfirmed (issue 44), else null. The grant is given up when its
     * release starts; until the release is confirmed nothing is handed out: a try finds it in the way, any other
     * acquisition waits for it (its worker creates no node before), then claims anew with a new node.
     */
    private QueueRelease<G> unconfirmed;
    private E loss;
    /** A held grant was lost and no release has reported it yet. */
    private boolean lostHeld;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    ZkQueueService(ZooKeeperSession session, String path) {
        this.session = session;
        this.path = path;
    }

    /** @return the kinds of node that make up this service's queue */
    abstract List<NodeKind> queueKinds();

    /**
     * @param queue the queue, in order
     * @param own the own node's index in it
     * @param kind the own node's kind
     * @return the name of the node to wait for, or null once the own node is admitted
     */
    abstract String blocker(List<String> queue, int own, NodeKind kind);

    /**
     * Makes the grant of an admitted node (on the worker, outside every lock).
     *
     * @param node the own node
     * @param kind its kind
     * @param own its stat, read after it was created
     * @return the grant
     * @throws KeeperException.NoNodeException if the own node is gone
     * @throws Exception if ZooKeeper failed
     */
    abstract G grant(String node, NodeKind kind, Stat own) throws Exception;

    /**
     * Makes the grant of an admitted node whose own node was created with {@code data}; calls
     * {@link #grant(String, NodeKind, Stat)} by default (the nodes of locks carry no data).
     */
    G grant(String node, NodeKind kind, Stat own, byte[] data) throws Exception {
        return grant(node, kind, own);
    }

    /**
     * A node below this service's directory, in a nested name's directory, that must be gone before an admitted
     * node of {@code kind} is granted; none by default.
     *
     * @param children the directory's children, all of them
     * @param kind the own node's kind
     * @param ownCzxid the own node's czxid
     * @return the node's path relative to this service's path, or null
     * @throws Exception if ZooKeeper failed
     */
    String nestedBlocker(List<String> children, NodeKind kind, long ownCzxid) throws Exception {
        return null;
    }

    /** @return the directory the queue's nodes live in; the service's path by default */
    String queueDir() {
        return path;
    }

    /** @return whether a blocked claim waits for any change of the queue (a semaphore) rather than for its blocker */
    boolean waitsOnDirectory() {
        return false;
    }

    /**
     * @param held a held grant
     * @return operations that go with the deletion of the own node, in its transaction (a semaphore frees its
     *         slot); none by default
     */
    List<org.apache.curator.framework.api.transaction.CuratorOp> releaseOps(G held) {
        return List.of();
    }

    /** @return the loss of this kind of service */
    abstract E lostException(String message, Throwable cause);

    /** @return what this is, for messages: "lock", "read/write lock" */
    abstract String what();

    /** @return how a grant of {@code kind} is called in messages */
    String modeName(NodeKind kind) {
        return kind == NodeKind.READ ? "read" : kind == NodeKind.WRITE ? "write" : kind == NodeKind.LEASE ? "permit" : "lock";
    }

    // ------------------------------------------------------------------ acquiring

    final G acquire(NodeKind kind, Duration timeout, String call) throws InterruptedException, TimeoutException {
        return acquire(kind, timeout, call, NO_DATA);
    }

    /**
     * An acquisition; {@code timeout} null waits without a limit, otherwise the rule of {@link Timeouts}: zero or
     * less is one try (as the try-method makes it), a {@link TimeoutException} if somebody is in the way; a timeout
     * too long to count in nanoseconds waits without a limit. A thread interrupted on entry claims nothing.
     */
    final G acquire(NodeKind kind, Duration timeout, String call, byte[] data) throws InterruptedException, TimeoutException {
        SessionThread.refuseOnSessionThread(call);
        if (Thread.interrupted()) {
            throw new InterruptedException("the " + what() + " on " + path + ": " + call + " on an interrupted thread; nothing was claimed");
        }
        if (timeout != null && Timeouts.tryOnly(timeout)) {
            return QueueCaller.awaitTry(this, start(kind, true, data), call).orElseThrow(() -> new TimeoutException("the "
                    + what() + " on " + path + " is not free now (a timeout of " + timeout + " is one try, at once); this"
                    + " owner's claim was withdrawn"));
        }
        return QueueCaller.await(this, start(kind, false, data), timeout == null || Timeouts.unlimited(timeout) ? null : timeout);
    }

    final Duration requireTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout");
    }

    final Optional<G> tryAcquire(NodeKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        return QueueCaller.awaitTry(this, start(kind, true, NO_DATA), call);
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind) {
        return acquireAsync(kind, NO_DATA);
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind, byte[] data) {
        QueueAttempt<G> a;
        try {
            a = start(kind, false, data);
        } catch (DiscoException e) {
            UserFuture<G> failed = new UserFuture<>(session.callbacks().executor(), null);
            session.callbacks().deliver(() -> failed.answer(null, e));
            return failed;
        }
        UserFuture<G> user = new UserFuture<>(session.callbacks().executor(), a.future);
        a.future.whenComplete((g, e) -> session.callbacks().deliver(() -> user.answer(g, e)));
        return user;
    }

    private QueueAttempt<G> start(NodeKind kind, boolean tryOnly, byte[] data) {
        QueueAttempt<G> a = new QueueAttempt<>(this, kind, tryOnly, data);
        QueueRelease<G> releaseFirst;
        synchronized (mon) {
            releaseFirst = unconfirmed;
            switch (state) {
                case CLOSED -> throw new IllegalStateException("the " + what() + " on " + path + " is closed");
                case LOST -> throw loss;
                case WAITING -> throw new IllegalStateException("an acquisition of the " + what() + " on " + path
                        + " is already in progress: use one service per concurrent owner");
                case HELD -> {
                    if (heldKind != kind) {
                        throw new IllegalStateException("this service holds a " + modeName(heldKind) + " grant of the "
                                + what() + " on " + path + ": there is no upgrade or downgrade; release it first");
                    }
                    a.future.complete(held);
                    a.withdrawn.complete(null);
                    return a;
                }
                case IDLE -> {
                    if (releaseFirst != null && tryOnly) {
                        // the released grant's node may still be there, and its delete be applied at any moment:
                        // something is in the way; nothing is handed out from it
                        a.future.complete(null);
                        a.withdrawn.complete(null);
                    } else {
                        state = state.to(LockState.WAITING);
                        pending = a;
                    }
                }
            }
        }
        if (releaseFirst != null) {
            releaseFirst.nudge(); // the acquisition wants it confirmed: no back-off
            if (tryOnly) {
                return a;
            }
        }
        a.future.whenComplete((g, e) -> onAttemptEnd(a, g, e));
        try {
            session.workers().execute(new QueueWorker<>(this, a));
        } catch (RejectedExecutionException e) {
            a.withdrawn.complete(null);
            a.future.completeExceptionally(new IllegalStateException("the session of the " + what() + " on " + path + " is closed", e));
        }
        return a;
    }

    /**
     * Waits, on an attempt's worker, until no release of this service is unconfirmed: only then may it create its
     * node (issue 44).
     *
     * @return false if the attempt ended meanwhile (given up, the service lost or closed)
     */
    final boolean awaitReleaseConfirmed(QueueAttempt<G> a) throws InterruptedException {
        while (true) {
            synchronized (mon) {
                if (unconfirmed == null) {
                    return !a.future.isDone();
                }
            }
            if (a.future.isDone()) {
                return false;
            }
            a.wake.acquire(); // released when the release is confirmed, and when the attempt ends
        }
    }

    /** @return whether a release of this service is unconfirmed */
    final boolean releaseUnconfirmed() {
        synchronized (mon) {
            return unconfirmed != null;
        }
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one, and the worker withdraws. */
    private void onAttemptEnd(QueueAttempt<G> a, G g, Throwable e) {
        if (e == null && g != null) {
            return; // committed
        }
        synchronized (mon) {
            if (pending == a) {
                pending = null;
                state = state.to(LockState.IDLE);
            }
        }
        a.wake.release();
    }

    boolean commit(QueueAttempt<G> a, G grant) {
        synchronized (mon) {
            if (pending != a || state != LockState.WAITING) {
                return false;
            }
            if (!a.future.complete(grant)) {
                return false;
            }
            state = state.to(LockState.HELD);
            held = grant;
            heldKind = a.kind;
            heldNode = a.node;
            pending = null;
            return true;
        }
    }

    /**
     * Watches the held node off the acquisition's path: its deletion by anybody else is the loss (and so is
     * finding it gone already).
     */
    void watchHeld(QueueAttempt<G> a) {
        String node = a.node;
        try {
            session.client().checkExists().usingWatcher(a.watcher).inBackground((c, event) -> {
                if (event.getResultCode() == KeeperException.Code.OK.intValue() && event.getStat() == null
                        || event.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    onSessionThread(() -> ownNodeDeleted(node));
                }
            }).forPath(node);
        } catch (Exception e) {
            // the client is closing: the session's end is reported by the session
        }
    }

    void rewatchHeld(QueueAttempt<G> a) {
        synchronized (mon) {
            if (state != LockState.HELD || !a.node.equals(heldNode)) {
                return;
            }
        }
        watchHeld(a);
    }

    /**
     * Replaces the held grant by {@code next} if {@code current} is still the held grant (an election's
     * proclamation: the same term with a new value).
     *
     * @return whether it was replaced
     */
    final boolean replaceHeld(G current, G next) {
        synchronized (mon) {
            if (state != LockState.HELD || held != current) {
                return false;
            }
            held = next;
            return true;
        }
    }

    /** @return the held node's path, or null */
    final String heldNode() {
        synchronized (mon) {
            return state == LockState.HELD ? heldNode : null;
        }
    }

    /** Reports the held node as deleted by somebody else, if it is (found by a caller's failed write). */
    final void heldNodeGone(String node) {
        ownNodeDeleted(node);
    }

    /** @return whether the service is closed or lost */
    final boolean finished() {
        synchronized (mon) {
            return state.finished();
        }
    }

    /** @return whether the service is closed */
    final boolean closed() {
        synchronized (mon) {
            return state == LockState.CLOSED;
        }
    }

    // ------------------------------------------------------------------ releasing

    /**
     * Releases the held grant (see {@link QueueRelease}). The grant is given up at once: {@link #held()} is empty and
     * nothing is handed out from it. Waits for the release to be confirmed, at most the request timeout and
     * uninterruptibly (an interrupted caller waits all the same and keeps its interrupt status); returns if it is,
     * throws the loss if the node was gone before the release (or the session ended with it), and a
     * {@link DiscoException} saying so when no answer came in time: the delete then goes on in the background, and
     * the next acquisition waits for it. Called again while the release is unconfirmed, waits for it once more.
     */
    final void release(NodeKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        QueueRelease<G> r;
        boolean first;
        synchronized (mon) {
            if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
            if (state == LockState.HELD) {
                if (heldKind != kind) {
                    throw new IllegalStateException(call + ": this service holds a " + modeName(heldKind) + " grant of the "
                            + what() + " on " + path + ", not a " + modeName(kind) + " one; nothing was released");
                }
                r = newRelease(call);
                first = true;
            } else if (unconfirmed != null && unconfirmed.kind == kind) {
                r = unconfirmed; // an earlier call of this grant's release timed out: wait for the same release
                first = false;
            } else {
                return;
            }
        }
        if (first) {
            r.start();
        } else {
            r.nudge();
        }
        awaitRelease(r, call);
    }

    /** Under {@link #mon}, in state HELD: gives the held grant up and makes its release the unconfirmed one. */
    private QueueRelease<G> newRelease(String call) {
        assert Thread.holdsLock(mon);
        QueueRelease<G> r;
        try {
            r = new QueueRelease<>(this, held, heldKind, heldNode, releaseOps(held));
        } catch (DiscoException e) {
            throw e;
        } catch (Exception e) {
            throw new DiscoException(call + ": could not prepare the release of the " + what() + " on " + path + ": " + e, e);
        }
        unconfirmed = r;
        state = state.to(LockState.IDLE);
        held = null;
        heldKind = null;
        heldNode = null;
        return r;
    }

    private void awaitRelease(QueueRelease<G> r, String call) {
        Duration timeout = session.options().requestTimeout();
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    r.confirmed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // a release is not given up half-way: wait on, keep the status
                } catch (TimeoutException e) {
                    r.giveUp();
                    throw new DiscoException("ZooKeeper at " + session.connectString() + " did not answer the release ("
                            + call + ") of the " + what() + " on " + path + " within " + timeout.toMillis() + " ms: the grant ("
                            + r.grant.token() + ") is given up, this owner no longer holds it and its token must not be used;"
                            + " the delete of its node " + r.node + " goes on in the background until ZooKeeper answers or the"
                            + " session ends, and the next acquisition of this service waits for it, then claims anew with a"
                            + " new token (calling " + call + " again waits for the same release once more)", e);
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    synchronized (mon) {
                        if (cause == loss) {
                            lostHeld = false; // reported here
                        }
                    }
                    throw cause instanceof RuntimeException re ? re : new DiscoException(String.valueOf(cause), cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits for a release as {@link #close()} does: at most the request timeout, keeping an interruption; no outcome. */
    private void awaitQuietly(QueueRelease<G> r) {
        long deadline = System.nanoTime() + session.options().requestTimeout().toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    r.confirmed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException | ExecutionException e) {
                    return; // unconfirmed: it goes on in the background
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The end of a release, on whatever thread learned it: confirmed (the acquisition waiting for it goes on), or
     * found to be a loss (the node was gone before it, the session ended).
     */
    void releaseEnded(QueueRelease<G> r, QueueRelease.Outcome outcome, KeeperException cause) {
        switch (outcome) {
            case DELETED -> {
                QueueAttempt<G> waiting;
                synchronized (mon) {
                    if (unconfirmed == r) {
                        unconfirmed = null;
                    }
                    waiting = pending;
                }
                r.confirmed.complete(null);
                if (waiting != null) {
                    waiting.wake.release();
                }
            }
            case GONE_BEFORE -> lose("its node " + r.node + " was gone before the release (deleted by somebody else, or its"
                    + " session ended)", cause);
            case SESSION_ENDED -> {
                DiscoException sessionLoss = session.lossOrNull();
                lose(sessionLoss != null ? "the ZooKeeper session was lost: " + sessionLoss.getMessage()
                        : "the ZooKeeper session ended while its node " + r.node + " was being released", sessionLoss);
            }
            case REFUSED -> r.confirmed.completeExceptionally(zkFailure("releasing (ZooKeeper refused the delete of " + r.node
                    + " and applied nothing: this owner still holds the " + what() + "; retry, or let the session end)", cause));
        }
        synchronized (mon) { // closed meanwhile: nothing is lost any more, the release is over all the same
            if (unconfirmed == r) {
                unconfirmed = null;
            }
        }
        r.confirmed.complete(null);
    }

    /**
     * ZooKeeper refused a release's delete for good: if nothing of it can have been applied and no caller was told
     * that the grant is given up (its caller still waits, nothing else began), the grant is held again.
     *
     * @return whether it is held again; false: the release goes on
     */
    boolean releaseRefused(QueueRelease<G> r) {
        synchronized (mon) {
            if (unconfirmed != r || r.givenUp() || r.maybeApplied() || state != LockState.IDLE || pending != null) {
                return false;
            }
            unconfirmed = null;
            state = state.to(LockState.HELD);
            held = r.grant;
            heldKind = r.kind;
            heldNode = r.node;
            return true;
        }
    }

    final CompletableFuture<Void> releaseAsync(NodeKind kind, String call) {
        return inBackground(() -> release(kind, call));
    }

    public Optional<G> held() {
        synchronized (mon) {
            return state == LockState.HELD ? Optional.of(held) : Optional.empty();
        }
    }

    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    public Optional<E> err() {
        synchronized (mon) {
            return Optional.ofNullable(loss);
        }
    }

    public CompletableFuture<Void> closeAsync() {
        return inBackground(this::close);
    }

    public void close() {
        QueueAttempt<G> a;
        QueueRelease<G> r;
        boolean first = false;
        synchronized (mon) {
            if (state == LockState.CLOSED) {
                return;
            }
            a = pending;
            pending = null;
            if (state == LockState.HELD) {
                QueueRelease<G> made = null;
                try {
                    made = newRelease("close()");
                } catch (DiscoException e) {
                    session.deleteInBackground(heldNode); // a slot left behind is taken over once this node is gone
                }
                first = made != null;
            }
            r = unconfirmed;
            state = state.to(LockState.CLOSED);
            held = null;
            heldKind = null;
            heldNode = null;
        }
        session.unregister(path, this);
        if (a != null) {
            a.future.completeExceptionally(new IllegalStateException("the " + what() + " on " + path + " was closed"));
            if (!SessionThread.onSessionThread()) {
                a.awaitWithdrawn(session.options().requestTimeout());
            }
        }
        if (r != null) {
            if (first) {
                r.start();
            } else {
                r.nudge();
            }
            if (!SessionThread.onSessionThread()) {
                awaitQuietly(r); // unconfirmed after the request timeout: it goes on in the background
            }
        }
        session.callbacks().deliver(() -> done.complete(null));
    }

    // ------------------------------------------------------------------ loss

    @Override
    public void sessionLost(String reason, Throwable cause) {
        lose("the ZooKeeper session was lost: " + reason, cause);
    }

    @Override
    public void sessionClosed() {
        close();
    }

    /**
     * The own node is gone (its watch, or a caller's failed write): the loss of a held grant, unless it is the node
     * of the release in progress, whose deletion is that release's (never a loss).
     */
    void ownNodeDeleted(String node) {
        boolean gone;
        QueueRelease<G> r = null;
        synchronized (mon) {
            if (unconfirmed != null && unconfirmed.node.equals(node)) {
                r = unconfirmed;
            }
            gone = state == LockState.HELD && node.equals(heldNode);
        }
        if (r != null) {
            r.seenGone();
        } else if (gone) {
            lose("its node " + node + " was deleted by somebody else", null);
        }
    }

    void lose(String reason, Throwable cause) {
        QueueAttempt<G> a;
        String node;
        QueueRelease<G> r;
        synchronized (mon) {
            if (state.finished()) {
                return;
            }
            loss = lost(reason, cause);
            r = unconfirmed;
            unconfirmed = null;
            // a release whose caller was told it is unconfirmed reports the loss at the next release call
            lostHeld = state == LockState.HELD || r != null && r.givenUp();
            node = heldNode;
            a = pending;
            pending = null;
            state = state.to(LockState.LOST);
            held = null;
            heldKind = null;
            heldNode = null;
        }
        session.unregister(path, this);
        if (a != null) {
            a.future.completeExceptionally(loss);
        }
        if (node != null) {
            session.deleteInBackground(node); // if the session still lives, leave nothing behind
        }
        if (r != null) {
            r.stop();
            r.confirmed.completeExceptionally(loss);
            session.deleteInBackground(r.node); // if the session still lives, the release's delete goes on
        }
        session.callbacks().deliver(() -> done.complete(null));
    }

    E lost(String reason, Throwable cause) {
        return lostException("the " + what() + " on " + path + " (ZooKeeper at " + session.connectString() + ") was lost: " + reason, cause);
    }

    DiscoException zkFailure(String what, Exception e) {
        return new DiscoException("ZooKeeper at " + session.connectString() + " failed while " + what + " the " + what() + " on " + path
                + ": " + e, e);
    }

    void onSessionThread(Runnable task) {
        SessionTasks.onSessionThread(session, task);
    }

    private CompletableFuture<Void> inBackground(Runnable task) {
        return SessionTasks.inBackground(session, task);
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    final <T> CompletableFuture<T> supplyInBackground(java.util.function.Supplier<T> task) {
        return SessionTasks.supplyInBackground(session, task);
    }

    @Override
    public String toString() {
        synchronized (mon) {
            return "ZooKeeper " + what() + " on " + path + " (" + state + (unconfirmed != null ? ", " + unconfirmed + " unconfirmed" : "") + ")";
        }
    }
}
