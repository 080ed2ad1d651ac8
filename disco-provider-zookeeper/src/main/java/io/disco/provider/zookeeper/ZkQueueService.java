package io.disco.provider.zookeeper;

import io.disco.core.SessionThread;
import io.disco.core.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * What every queue-based service on a {@link ZooKeeperSession} shares (the lock, the read/write lock): one
 * acquisition at a time, run by a worker that alone creates its own ephemeral-sequential node
 * ({@code <path>/_c_<uuid>-<kind><sequence>}, Curator's protected mode), checks that the node's ephemeral owner
 * is this session (a node left by an earlier session of the same client, CURATOR-604, is deleted and never
 * used), waits on the node the subclass names until it names none, then has the subclass make the grant and
 * commits it, unless it was given up meanwhile; every other way out withdraws the node before a synchronous
 * call returns. A held node deleted by anybody else, or the session's loss, is the loss of the service.
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
    private Attempt pending;
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

    /** One acquisition: run by a worker, which alone creates and withdraws its node. */
    private final class Attempt {
        final NodeKind kind;
        final boolean tryOnly;
        /** The own node's data (an election candidate's value; empty for the locks). */
        final byte[] data;
        /** Completes with the grant, with null (a tryLock that found somebody ahead) or exceptionally. */
        final CompletableFuture<G> future = new CompletableFuture<>();
        /** Completes once nothing of this attempt is left in ZooKeeper (or it became the held grant). */
        final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
        final Semaphore wake = new Semaphore(0);
        volatile String node;
        final CuratorWatcher watcher = event -> {
            wake.release();
            if (event.getType() == Watcher.Event.EventType.NodeDeleted && event.getPath() != null
                    && event.getPath().equals(node)) {
                onSessionThread(() -> ownNodeDeleted(event.getPath()));
            } else if (event.getType() == Watcher.Event.EventType.NodeDataChanged && event.getPath() != null
                    && event.getPath().equals(node)) {
                onSessionThread(() -> rewatchHeld(this)); // a watch fires once: keep watching for the deletion
            }
        };

        Attempt(NodeKind kind, boolean tryOnly, byte[] data) {
            this.kind = kind;
            this.tryOnly = tryOnly;
            this.data = data;
        }
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
        return await(start(kind, false, data), timeout);
    }

    final Duration requireTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout");
    }

    final Optional<G> tryAcquire(NodeKind kind, String call) {
        SessionThread.refuseOnSessionThread(call);
        Attempt a = start(kind, true, NO_DATA);
        try {
            G g = a.future.get(session.options().requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
            awaitWithdrawn(a);
            return Optional.ofNullable(g);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Optional<G> g = giveUp(a);
            if (g.isPresent()) {
                return g;
            }
            throw new DiscoException("interrupted while trying the " + what() + " on " + path, e);
        } catch (TimeoutException e) {
            Optional<G> g = giveUp(a);
            if (g.isPresent()) {
                return g;
            }
            throw new DiscoException("ZooKeeper at " + session.connectString() + " did not answer " + call + " on " + path
                    + " within " + session.options().requestTimeout(), e);
        } catch (ExecutionException e) {
            awaitWithdrawn(a);
            throw rethrow(e.getCause());
        }
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind) {
        return acquireAsync(kind, NO_DATA);
    }

    final CompletableFuture<G> acquireAsync(NodeKind kind, byte[] data) {
        Attempt a;
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

    private G await(Attempt a, Duration timeout) throws InterruptedException, TimeoutException {
        try {
            return timeout == null ? a.future.get() : a.future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Optional<G> g = giveUp(a);
            if (g.isPresent()) { // committed before the interruption: the caller holds the lock
                Thread.currentThread().interrupt();
                return g.get();
            }
            throw e;
        } catch (TimeoutException e) {
            Optional<G> g = giveUp(a);
            if (g.isPresent()) {
                return g.get();
            }
            TimeoutException t = new TimeoutException("the " + what() + " on " + path + " was still held by another owner after " + timeout
                    + "; this owner's claim was withdrawn");
            t.initCause(e);
            throw t;
        } catch (ExecutionException e) {
            awaitWithdrawn(a);
            throw rethrow(e.getCause());
        }
    }

    /** Withdraws a pending attempt and waits for its node to go; the grant if it had committed first. */
    private Optional<G> giveUp(Attempt a) {
        boolean interrupted = Thread.interrupted();
        a.future.cancel(false);
        awaitWithdrawn(a);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        G g = a.future.isCompletedExceptionally() ? null : a.future.getNow(null);
        return Optional.ofNullable(g);
    }

    private void awaitWithdrawn(Attempt a) {
        boolean interrupted = false;
        long until = System.nanoTime() + session.options().requestTimeout().toNanos();
        try {
            while (true) {
                try {
                    a.withdrawn.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | TimeoutException e) {
                    return; // Curator's guaranteed delete keeps trying in the background
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Attempt start(NodeKind kind, boolean tryOnly, byte[] data) {
        Attempt a = new Attempt(kind, tryOnly, data);
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
            session.workers().execute(() -> run(a));
        } catch (RejectedExecutionException e) {
            a.withdrawn.complete(null);
            a.future.completeExceptionally(new IllegalStateException("the session of the " + what() + " on " + path + " is closed", e));
        }
        return a;
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one, and the worker withdraws. */
    private void onAttemptEnd(Attempt a, G g, Throwable e) {
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

    /** The worker: create the own node, wait for the predecessors to go, commit or withdraw. */
    private void run(Attempt a) {
        CuratorFramework c = session.client();
        String node = null;
        boolean committed = false;
        try {
            if (a.future.isDone()) {
                return;
            }
            Stat own = new Stat();
            node = c.create().storingStatIn(own).creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ZKPaths.makePath(queueDir(), a.kind.marker()), a.data);
            a.node = node;
            if (own.getCzxid() == 0) { // found again by Curator's protected mode after a lost answer: read it
                own = c.checkExists().forPath(node);
                if (own == null) {
                    lose("its node " + node + " was deleted before it could wait", null);
                    return;
                }
            }
            if (own.getEphemeralOwner() != session.sessionId()) {
                a.future.completeExceptionally(lost("its node " + node + " belongs to session 0x"
                        + Long.toHexString(own.getEphemeralOwner()) + ", not to this one (0x"
                        + Long.toHexString(session.sessionId()) + "): the session changed while it was created", null));
                return;
            }
            boolean watchingOwn = false;
            String ownName = NodeKind.name(node);
            while (!a.future.isDone()) {
                List<String> children = waitsOnDirectory()
                        ? c.getChildren().usingWatcher(a.watcher).forPath(queueDir())
                        : c.getChildren().forPath(queueDir());
                List<String> queue = NodeKind.queue(children, queueKinds());
                int i = queue.indexOf(ownName);
                if (i < 0) {
                    lose("its node " + node + " was deleted by somebody else while it waited", null);
                    return;
                }
                String blocker = blocker(queue, i, a.kind);
                if (blocker == null) {
                    blocker = nestedBlocker(children, a.kind, own.getCzxid());
                }
                if (blocker == null) {
                    if (session.parkIfSuspended(a.wake)) {
                        a.wake.acquire(); // no new grant while SUSPENDED: wait for the session to come back or go
                        continue;
                    }
                    G grant;
                    try {
                        grant = grant(node, a.kind, own, a.data);
                    } catch (KeeperException.NoNodeException e) {
                        lose("its node " + node + " was deleted by somebody else as it was admitted", e);
                        return;
                    }
                    committed = commit(a, grant);
                    if (committed) {
                        watchHeld(a);
                    } else {
                        try { // given up at the instant of the grant: what the grant took goes too
                            deleteHeld(node, releaseOps(grant));
                        } catch (Exception e) {
                            // the node is withdrawn below; a slot left behind is free once the node is gone
                        }
                    }
                    return;
                }
                if (a.tryOnly) {
                    a.future.complete(null);
                    return;
                }
                if (!watchingOwn) { // from now on, a deletion of the own node wakes the wait
                    if (c.checkExists().usingWatcher(a.watcher).forPath(node) == null) {
                        lose("its node " + node + " was deleted by somebody else while it waited", null);
                        return;
                    }
                    watchingOwn = true;
                }
                Stat predecessor = waitsOnDirectory() ? own
                        : c.checkExists().usingWatcher(a.watcher).forPath(ZKPaths.makePath(queueDir(), blocker));
                if (predecessor != null) {
                    a.wake.acquire(); // the predecessor's deletion, the own node's, a give-up or the session's end
                }
            }
        } catch (InterruptedException e) {
            a.future.completeExceptionally(new DiscoException("the worker of the " + what() + " on " + path + " was interrupted", e));
        } catch (KeeperException.SessionExpiredException e) {
            DiscoException sessionLoss = session.lossOrNull();
            a.future.completeExceptionally(lost(sessionLoss == null ? "the session expired" : sessionLoss.getMessage(), e));
        } catch (Exception e) {
            a.future.completeExceptionally(failure("acquiring", e));
        } finally {
            if (!committed && node != null) {
                withdraw(node);
            }
            a.withdrawn.complete(null);
        }
    }

    private boolean commit(Attempt a, G grant) {
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
    private void watchHeld(Attempt a) {
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

    private void rewatchHeld(Attempt a) {
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

    /** Deletes the held node with the nodes that go with it, in one transaction; the own node alone if they are gone. */
    private void deleteHeld(String node, List<org.apache.curator.framework.api.transaction.CuratorOp> extra) throws Exception {
        CuratorFramework c = session.client();
        if (extra.isEmpty()) {
            c.delete().forPath(node);
            return;
        }
        List<org.apache.curator.framework.api.transaction.CuratorOp> ops = new java.util.ArrayList<>(extra);
        ops.add(c.transactionOp().delete().forPath(node));
        try {
            c.transaction().forOperations(ops);
        } catch (KeeperException.NoNodeException e) {
            // a node that went with the grant is gone (an operator): the own node alone; never the other node's
            // path again, which may be somebody else's by now
            c.delete().forPath(node);
        }
    }

    private void withdraw(String node) {
        try {
            session.client().delete().guaranteed().forPath(node);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        } catch (Exception e) {
            // guaranteed: Curator retries in the background until it succeeds or the session ends
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
            deleteHeld(node, extra);
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
            throw failure("releasing (this owner still holds the lock; retry, or let the session end)", e);
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
        Attempt a;
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
                awaitWithdrawn(a);
            }
        }
        if (node != null) {
            if (SessionThread.onSessionThread()) {
                session.deleteInBackground(node); // a slot left behind is taken over once this node is gone
            } else {
                try {
                    deleteHeld(node, extra);
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

    private void ownNodeDeleted(String node) {
        boolean gone;
        synchronized (mon) {
            gone = state == LockState.HELD && node.equals(heldNode) && !node.equals(releasing);
        }
        if (gone) {
            lose("its node " + node + " was deleted by somebody else", null);
        }
    }

    private void lose(String reason, Throwable cause) {
        Attempt a;
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

    private E lost(String reason, Throwable cause) {
        return lostException("the " + what() + " on " + path + " (ZooKeeper at " + session.connectString() + ") was lost: " + reason, cause);
    }

    private DiscoException failure(String what, Exception e) {
        return new DiscoException("ZooKeeper at " + session.connectString() + " failed while " + what + " the " + what() + " on " + path
                + ": " + e, e);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof CancellationException c) {
            return new IllegalStateException("the acquisition was given up", c);
        }
        if (t instanceof RuntimeException r) {
            return r;
        }
        return new DiscoException(String.valueOf(t), t);
    }

    private void onSessionThread(Runnable task) {
        try {
            session.timer().execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    private CompletableFuture<Void> inBackground(Runnable task) {
        return supplyInBackground(() -> {
            task.run();
            return null;
        });
    }

    /** Runs {@code task} on a worker; the future completes on the callback executor. */
    final <T> CompletableFuture<T> supplyInBackground(java.util.function.Supplier<T> task) {
        UserFuture<T> user = new UserFuture<>(session.callbacks().executor(), null);
        Runnable run = () -> {
            Throwable error = null;
            T result = null;
            try {
                result = task.get();
            } catch (Throwable t) {
                error = t;
            }
            Throwable e = error;
            T r = result;
            session.callbacks().deliver(() -> user.answer(r, e));
        };
        try {
            session.workers().execute(run);
        } catch (RejectedExecutionException e) {
            session.callbacks().deliver(run);
        }
        return user;
    }

    @Override
    public String toString() {
        synchronized (mon) {
            return "ZooKeeper " + what() + " on " + path + " (" + state + ")";
        }
    }
}
