package io.disco.core.internal.grant;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An {@link Acquisition} run by a worker of its backend (ZooKeeper, Redis), which alone creates and withdraws its
 * claim, while its caller waits ({@link CallerWait}): the outcome ({@link #future}), the end of the claim
 * ({@link #withdrawn}) and the worker's wake-ups ({@link #wake}, released by every event the worker may wait for,
 * and by the caller's giving up). What the claim is, and how it is made, is the subclass's.
 *
 * @param <G> the grant
 */
public abstract class WorkedAcquisition<G> implements Acquisition<G> {

    /** Whether it is one try. */
    public final boolean tryOnly;
    /** When the acquisition started, on {@link System#nanoTime()}. */
    public final long startedNanos = System.nanoTime();
    /** Completes with the grant, with null (a try that found somebody ahead) or exceptionally. */
    public final CompletableFuture<G> future = new CompletableFuture<>();
    /** Completes once nothing of this attempt is left in the backend (or it became the held grant). */
    public final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
    /** Released by every event the worker may be waiting for. */
    public final Semaphore wake = new Semaphore(0);

    /** @param tryOnly whether it is one try */
    protected WorkedAcquisition(boolean tryOnly) {
        this.tryOnly = tryOnly;
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

    /**
     * Told under the ledger's monitor just before the caller can see the grant (the listeners' "acquired": so that
     * it is told before anything the caller does with the grant, its release first of all). Set by the service when
     * it commits a grant.
     */
    public volatile Runnable beforeHandOver = () -> {};

    /** Told when "acquired" was told but the caller had given up at that instant (the listeners' "released"). */
    public volatile Runnable handOverUndone = () -> {};

    @Override
    public boolean handOver(G grant) {
        if (future.isDone()) {
            return false;
        }
        beforeHandOver.run();
        if (!future.complete(grant)) {
            handOverUndone.run();
            return false;
        }
        return true;
    }

    @Override
    public void fail(Throwable cause) {
        future.completeExceptionally(cause);
        wake.release();
    }

    /**
     * Gives this pending attempt up and waits (up to {@code requestTimeout}) for its claim to go, keeping an
     * interruption.
     *
     * @param requestTimeout how long to wait for the withdrawal
     * @return the grant, if it was handed over first
     */
    public Optional<G> giveUp(Duration requestTimeout) {
        boolean interrupted = Thread.interrupted();
        future.cancel(false);
        wake.release();
        awaitWithdrawn(requestTimeout);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        G g = future.isCompletedExceptionally() ? null : future.getNow(null);
        return Optional.ofNullable(g);
    }

    /**
     * Waits up to {@code requestTimeout} for nothing of this attempt to be left, keeping an interruption; past it, the
     * withdrawal goes on in the background (the backend's own retries, or the claim's expiry with its owner).
     *
     * @param requestTimeout how long to wait
     */
    public void awaitWithdrawn(Duration requestTimeout) {
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
                    return;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * @param t what an attempt failed with
     * @return what its caller throws
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof CancellationException c) {
            return new IllegalStateException("the acquisition was given up", c);
        }
        if (t instanceof RuntimeException r) {
            return r;
        }
        return new DiscoException(String.valueOf(t), t);
    }
}
