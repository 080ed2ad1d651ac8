package io.disco.provider.zookeeper;

import io.disco.core.SessionThread;
import io.disco.core.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
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
 * service.
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
    private String releasing;
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

    final G acquire(NodeKind kind, Duration timeout, String call, byte[] data) throws InterruptedException, TimeoutException {
        if (timeout != null && (timeout.isZero() || timeout.isNegative())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        SessionThread.refuseOnSessionThread(call);
        return QueueCaller.await(this, start(kind, false, data), timeout);
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
        synchronized (mon) {
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
                    state = state.to(LockState.WAITING);
                    pending = a;
                }
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

    final void release(NodeKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        String node;
        List<org.apache.curator.framework.api.transaction.CuratorOp> extra;
        synchronized (mon) {
            if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
            if (state != LockState.HELD) {
                return;
            }
            if (heldKind != kind) {
                throw new IllegalStateException(call + ": this service holds a " + modeName(heldKind) + " grant of the "
                        + what() + " on " + path + ", not a " + modeName(kind) + " one; nothing was released");
            }
            node = heldNode;
            extra = releaseOps(held);
            releasing = node;
        }
        try {
            QueueNodes.deleteHeld(session.client(), node, extra);
        } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
            lose("its node " + node + " was gone before the release", e);
            synchronized (mon) {
                lostHeld = false;
                throw loss;
            }
        } catch (Exception e) {
            synchronized (mon) {
                releasing = null;
            }
            throw zkFailure("releasing (this owner still holds the lock; retry, or let the session end)", e);
        }
        synchronized (mon) {
            releasing = null;
            if (state == LockState.HELD && node.equals(heldNode)) {
                state = state.to(LockState.IDLE);
                held = null;
                heldKind = null;
                heldNode = null;
            } else if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
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
        String node;
        List<org.apache.curator.framework.api.transaction.CuratorOp> extra;
        synchronized (mon) {
            if (state == LockState.CLOSED) {
                return;
            }
            a = pending;
            pending = null;
            node = state == LockState.HELD ? heldNode : null;
            extra = state == LockState.HELD ? releaseOps(held) : List.of();
            releasing = node;
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
        if (node != null) {
            if (SessionThread.onSessionThread()) {
                session.deleteInBackground(node); // a slot left behind is taken over once this node is gone
            } else {
                try {
                    QueueNodes.deleteHeld(session.client(), node, extra);
                } catch (Exception e) {
                    session.deleteInBackground(node); // a slot left behind is taken over once this node is gone
                }
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

    void ownNodeDeleted(String node) {
        boolean gone;
        synchronized (mon) {
            gone = state == LockState.HELD && node.equals(heldNode) && !node.equals(releasing);
        }
        if (gone) {
            lose("its node " + node + " was deleted by somebody else", null);
        }
    }

    void lose(String reason, Throwable cause) {
        QueueAttempt<G> a;
        String node;
        synchronized (mon) {
            if (state.finished()) {
                return;
            }
            loss = lost(reason, cause);
            lostHeld = state == LockState.HELD;
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
            return "ZooKeeper " + what() + " on " + path + " (" + state + ")";
        }
    }
}
