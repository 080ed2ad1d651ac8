package io.disco.provider.zookeeper;

import io.disco.core.SessionThread;
import io.disco.core.UserFuture;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
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
 * Curator's {@code InterProcessMutex} protocol behind {@link LockService}: the own node is
 * {@code <path>/_c_<uuid>-lock-<sequence>}, ephemeral-sequential on this owner's session; the first in sequence
 * order holds the lock, every other waits on its predecessor. The token is the own node's czxid (zxids are
 * totally ordered across the ensemble's history and a successor's node is created after its predecessor's), not
 * the sequence number, which is a per-parent 32-bit counter that restarts when Curator's container parent is
 * deleted. A node whose ephemeral owner is not this session (left by an earlier session of the same client,
 * CURATOR-604) is deleted, never used.
 */
final class ZkLockService implements LockService, SessionMember {

    private static final byte[] NO_DATA = new byte[0];

    private final ZooKeeperSession session;
    private final String path;
    private final Object mon = new Object();
    private LockState state = LockState.IDLE;
    private Attempt pending;
    private Grant held;
    private String heldNode;
    private String releasing;
    private LockLostException loss;
    /** A held grant was lost and no release has reported it yet. */
    private boolean lostHeld;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    ZkLockService(ZooKeeperSession session, String path) {
        this.session = session;
        this.path = path;
    }

    /** One acquisition: run by a worker, which alone creates and withdraws its node. */
    private final class Attempt {
        final boolean tryOnly;
        /** Completes with the grant, with null (a tryLock that found somebody ahead) or exceptionally. */
        final CompletableFuture<Grant> future = new CompletableFuture<>();
        /** Completes once nothing of this attempt is left in ZooKeeper (or it became the held grant). */
        final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
        final Semaphore wake = new Semaphore(0);
        volatile String node;
        final CuratorWatcher watcher = event -> {
            wake.release();
            if (event.getType() == Watcher.Event.EventType.NodeDeleted && event.getPath() != null
                    && event.getPath().equals(node)) {
                onSessionThread(() -> ownNodeDeleted(event.getPath()));
            }
        };

        Attempt(boolean tryOnly) {
            this.tryOnly = tryOnly;
        }
    }

    // ------------------------------------------------------------------ acquiring

    @Override
    public Grant lock() throws InterruptedException {
        try {
            return await(start(false), null);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Grant lock(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        return await(start(false), timeout);
    }

    @Override
    public Optional<Grant> tryLock() {
        SessionThread.refuseOnSessionThread("lock.tryLock()");
        Attempt a = start(true);
        try {
            Grant g = a.future.get(session.options().requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
            awaitWithdrawn(a);
            return Optional.ofNullable(g);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Optional<Grant> g = giveUp(a);
            if (g.isPresent()) {
                return g;
            }
            throw new DiscoException("interrupted while trying the lock on " + path, e);
        } catch (TimeoutException e) {
            Optional<Grant> g = giveUp(a);
            if (g.isPresent()) {
                return g;
            }
            throw new DiscoException("ZooKeeper at " + session.connectString() + " did not answer tryLock on " + path
                    + " within " + session.options().requestTimeout(), e);
        } catch (ExecutionException e) {
            awaitWithdrawn(a);
            throw rethrow(e.getCause());
        }
    }

    @Override
    public CompletableFuture<Grant> lockAsync() {
        Attempt a;
        try {
            a = start(false);
        } catch (LockLostException e) {
            UserFuture<Grant> failed = new UserFuture<>(session.callbacks().executor(), null);
            session.callbacks().deliver(() -> failed.answer(null, e));
            return failed;
        }
        UserFuture<Grant> user = new UserFuture<>(session.callbacks().executor(), a.future);
        a.future.whenComplete((g, e) -> session.callbacks().deliver(() -> user.answer(g, e)));
        return user;
    }

    private Grant await(Attempt a, Duration timeout) throws InterruptedException, TimeoutException {
        SessionThread.refuseOnSessionThread("lock.lock()");
        try {
            return timeout == null ? a.future.get() : a.future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Optional<Grant> g = giveUp(a);
            if (g.isPresent()) { // committed before the interruption: the caller holds the lock
                Thread.currentThread().interrupt();
                return g.get();
            }
            throw e;
        } catch (TimeoutException e) {
            Optional<Grant> g = giveUp(a);
            if (g.isPresent()) {
                return g.get();
            }
            TimeoutException t = new TimeoutException("the lock on " + path + " was still held by another owner after " + timeout
                    + "; this owner's claim was withdrawn");
            t.initCause(e);
            throw t;
        } catch (ExecutionException e) {
            awaitWithdrawn(a);
            throw rethrow(e.getCause());
        }
    }

    /** Withdraws a pending attempt and waits for its node to go; the grant if it had committed first. */
    private Optional<Grant> giveUp(Attempt a) {
        boolean interrupted = Thread.interrupted();
        a.future.cancel(false);
        awaitWithdrawn(a);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Grant g = a.future.isCompletedExceptionally() ? null : a.future.getNow(null);
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

    private Attempt start(boolean tryOnly) {
        Attempt a = new Attempt(tryOnly);
        synchronized (mon) {
            switch (state) {
                case CLOSED -> throw new IllegalStateException("the lock on " + path + " is closed");
                case LOST -> throw loss;
                case WAITING -> throw new IllegalStateException("an acquisition of the lock on " + path
                        + " is already in progress: use one service per concurrent owner");
                case HELD -> {
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
            a.future.completeExceptionally(new IllegalStateException("the session of the lock on " + path + " is closed", e));
        }
        return a;
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one, and the worker withdraws. */
    private void onAttemptEnd(Attempt a, Grant g, Throwable e) {
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
            node = c.create().creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ZKPaths.makePath(path, LockNodes.LOCK_NAME), NO_DATA);
            a.node = node;
            Stat own = c.checkExists().usingWatcher(a.watcher).forPath(node);
            if (own == null) {
                lose("its node " + node + " was deleted before it could wait", null);
                return;
            }
            if (own.getEphemeralOwner() != session.sessionId()) {
                a.future.completeExceptionally(lost("its node " + node + " belongs to session 0x"
                        + Long.toHexString(own.getEphemeralOwner()) + ", not to this one (0x"
                        + Long.toHexString(session.sessionId()) + "): the session changed while it was created", null));
                return;
            }
            Grant grant = new Grant(node, FencingToken.of(own.getCzxid()));
            String ownName = LockNodes.name(node);
            while (!a.future.isDone()) {
                List<String> queue = LockNodes.queue(c.getChildren().forPath(path));
                int i = queue.indexOf(ownName);
                if (i < 0) {
                    lose("its node " + node + " was deleted by somebody else while it waited", null);
                    return;
                }
                if (i == 0) {
                    if (session.parkIfSuspended(a.wake)) {
                        a.wake.acquire(); // no new grant while SUSPENDED: wait for the session to come back or go
                        continue;
                    }
                    committed = commit(a, grant);
                    return;
                }
                if (a.tryOnly) {
                    a.future.complete(null);
                    return;
                }
                Stat predecessor = c.checkExists().usingWatcher(a.watcher).forPath(ZKPaths.makePath(path, queue.get(i - 1)));
                if (predecessor != null) {
                    a.wake.acquire(); // the predecessor's deletion, the own node's, a give-up or the session's end
                }
            }
        } catch (InterruptedException e) {
            a.future.completeExceptionally(new DiscoException("the worker of the lock on " + path + " was interrupted", e));
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

    private boolean commit(Attempt a, Grant grant) {
        synchronized (mon) {
            if (pending != a || state != LockState.WAITING) {
                return false;
            }
            if (!a.future.complete(grant)) {
                return false;
            }
            state = state.to(LockState.HELD);
            held = grant;
            heldNode = a.node;
            pending = null;
            return true;
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

    @Override
    public void unlock() {
        SessionThread.refuseOnSessionThread("lock.unlock()");
        String node;
        synchronized (mon) {
            if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
            if (state != LockState.HELD) {
                return;
            }
            node = heldNode;
            releasing = node;
        }
        try {
            session.client().delete().forPath(node);
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
                heldNode = null;
            } else if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
        }
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return inBackground(this::unlock);
    }

    @Override
    public Optional<Grant> held() {
        synchronized (mon) {
            return state == LockState.HELD ? Optional.of(held) : Optional.empty();
        }
    }

    @Override
    public CompletionStage<Void> done() {
        return done.minimalCompletionStage();
    }

    @Override
    public Optional<LockLostException> err() {
        synchronized (mon) {
            return Optional.ofNullable(loss);
        }
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
        return inBackground(this::close);
    }

    @Override
    public void close() {
        Attempt a;
        String node;
        synchronized (mon) {
            if (state == LockState.CLOSED) {
                return;
            }
            a = pending;
            pending = null;
            node = state == LockState.HELD ? heldNode : null;
            releasing = node;
            state = state.to(LockState.CLOSED);
            held = null;
            heldNode = null;
        }
        session.unregister(path, this);
        if (a != null) {
            a.future.completeExceptionally(new IllegalStateException("the lock on " + path + " was closed"));
            if (!SessionThread.onSessionThread()) {
                awaitWithdrawn(a);
            }
        }
        if (node != null) {
            if (SessionThread.onSessionThread()) {
                session.deleteInBackground(node);
            } else {
                withdraw(node);
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

    private LockLostException lost(String reason, Throwable cause) {
        return new LockLostException("the lock on " + path + " (ZooKeeper at " + session.connectString() + ") was lost: " + reason, cause);
    }

    private DiscoException failure(String what, Exception e) {
        return new DiscoException("ZooKeeper at " + session.connectString() + " failed while " + what + " the lock on " + path
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
        UserFuture<Void> user = new UserFuture<>(session.callbacks().executor(), null);
        Runnable run = () -> {
            Throwable error = null;
            try {
                task.run();
            } catch (Throwable t) {
                error = t;
            }
            Throwable e = error;
            session.callbacks().deliver(() -> user.answer(null, e));
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
            return "ZooKeeper lock on " + path + " (" + state + ")";
        }
    }
}
