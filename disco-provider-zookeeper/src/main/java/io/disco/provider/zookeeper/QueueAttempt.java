package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.Acquisition;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.Watcher;

/**
 * One acquisition of a queue service: what it asks for (its kind, one try or a wait, its node's data), its
 * outcome ({@link #future}), and its own node once created. Run by a worker ({@link QueueWorker}), which alone
 * creates and withdraws the node; the caller waits on {@link #future} and, when it gives up, on
 * {@link #withdrawn}. Its {@link #watcher} wakes the worker on every event it waits for, and reports the own
 * node's deletion and data change to the service ({@link OwnNodeEvents}), which keeps the watcher for the node
 * once the node is held.
 *
 * @param <G> the grant
 */
final class QueueAttempt<G extends Fenced> implements Acquisition<G> {

    final NodeKind kind;
    final boolean tryOnly;
    /** When the acquisition started, on {@link System#nanoTime()}. */
    final long startedNanos = System.nanoTime();
    /** The own node's data (an election candidate's value; empty for the locks). */
    final byte[] data;
    /** Completes with the grant, with null (a tryLock that found somebody ahead) or exceptionally. */
    final CompletableFuture<G> future = new CompletableFuture<>();
    /** Completes once nothing of this attempt is left in ZooKeeper (or it became the held grant). */
    final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
    /** Released by every event the worker may be waiting for. */
    final Semaphore wake = new Semaphore(0);

    volatile String node;
    /** Wakes the worker; reports the own node's deletion (and a data change, after which it is watched again). */
    final CuratorWatcher watcher;

    /** What the service hears of the own node, from ZooKeeper's event thread: hand over, never block. */
    interface OwnNodeEvents {

        /** The own node {@code node} was deleted. */
        void ownNodeDeleted(String node);

        /** The own node {@code node}'s data changed: a watch fires once, so the held node is watched again. */
        void ownNodeChanged(String node);
    }

    QueueAttempt(OwnNodeEvents events, NodeKind kind, boolean tryOnly, byte[] data) {
        this.kind = kind;
        this.tryOnly = tryOnly;
        this.data = data;
        this.watcher = event -> {
            wake.release();
            if (event.getType() == Watcher.Event.EventType.NodeDeleted
                    && event.getPath() != null
                    && event.getPath().equals(node)) {
                events.ownNodeDeleted(event.getPath());
            } else if (event.getType() == Watcher.Event.EventType.NodeDataChanged
                    && event.getPath() != null
                    && event.getPath().equals(node)) {
                events.ownNodeChanged(event.getPath()); // a watch fires once: keep watching for the deletion
            }
        };
    }

    @Override
    public boolean tryOnly() {
        return tryOnly;
    }

    @Override
    public void answerAtOnce(G held) {
        future.complete(held);
        withdrawn.complete(null);
    }

    @Override
    public boolean handOver(G grant) {
        return future.complete(grant);
    }

    @Override
    public void fail(Throwable cause) {
        future.completeExceptionally(cause);
    }

    /** Withdraws this pending attempt and waits for its node to go; the grant if it had committed first. */
    Optional<G> giveUp(Duration requestTimeout) {
        boolean interrupted = Thread.interrupted();
        future.cancel(false);
        awaitWithdrawn(requestTimeout);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        G g = future.isCompletedExceptionally() ? null : future.getNow(null);
        return Optional.ofNullable(g);
    }

    /** Waits up to {@code requestTimeout} for nothing of this attempt to be left, keeping an interruption. */
    void awaitWithdrawn(Duration requestTimeout) {
        boolean interrupted = false;
        long until = System.nanoTime() + requestTimeout.toNanos();
        try {
            while (true) {
                try {
                    withdrawn.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
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

    /** @return what a caller throws for an attempt that failed with {@code t} */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof CancellationException c) {
            return new IllegalStateException("the acquisition was given up", c);
        }
        if (t instanceof RuntimeException r) {
            return r;
        }
        return new DiscoException(String.valueOf(t), t);
    }
}
