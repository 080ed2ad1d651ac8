package io.disco.provider.redis;

import io.disco.core.internal.grant.Acquisition;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One acquisition of a queue service: what it asks for (its kind, one try or a wait, its claim's value), its outcome
 * ({@link #future}), and its claim: a random id, fixed before the first request, so that a request whose answer was
 * lost is sent again with the same id and the script adopts the claim an earlier copy made. Run by a worker
 * ({@link ClaimWorker}), which alone enqueues and withdraws the claim; the caller waits on {@link #future} and, when
 * it gives up, on {@link #withdrawn}. {@link #wake} is released by everything the worker may wait for (a message that
 * admits the claim, the end of the attempt, a confirmed release).
 *
 * @param <G> the grant
 */
final class QueueClaim<G extends Fenced> implements Acquisition<G> {

    private static final SecureRandom IDS = new SecureRandom();

    final ClaimKind kind;
    final boolean tryOnly;
    /** When the acquisition started, on {@link System#nanoTime()}. */
    final long startedNanos = System.nanoTime();
    /** The claim's value (an election candidate's), or "". */
    final String value;
    /** Who claims ({@code ClaimMetadata}'s JSON), made on the calling thread. */
    final String meta;
    /** The claim's id, unique: 16 random hex digits. */
    final String id;
    /** The claim's Redis key. */
    final String key;
    /** The claim's key as its grant reports it: {@code <name>/<id>}. */
    final String grantKey;
    /** Completes with the grant, with null (a try that found somebody ahead) or exceptionally. */
    final CompletableFuture<G> future = new CompletableFuture<>();
    /** Completes once nothing of this attempt is left in Redis (or it became the held grant). */
    final CompletableFuture<Void> withdrawn = new CompletableFuture<>();
    /** Released by every event the worker may be waiting for. */
    final Semaphore wake = new Semaphore(0);

    QueueClaim(String name, ClaimKind kind, boolean tryOnly, String value, String meta) {
        this.kind = kind;
        this.tryOnly = tryOnly;
        this.value = value;
        this.meta = meta;
        byte[] b = new byte[8];
        IDS.nextBytes(b);
        this.id = HexFormat.of().formatHex(b);
        this.key = RedisKeys.claim(name, id);
        this.grantKey = RedisKeys.grantKey(name, id);
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

    /** Told, under the ledger's monitor, just before the caller can see the grant (the listeners' "acquired"). */
    volatile Runnable beforeHandOver = () -> {};

    /** Told if the grant was told acquired but the caller had given up at that instant (the listeners' "released"). */
    volatile Runnable handOverUndone = () -> {};

    @Override
    public boolean handOver(G grant) {
        if (future.isDone()) {
            return false;
        }
        beforeHandOver.run(); // before the caller can act on the grant: "acquired" is told before its release
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

    /** Gives this pending attempt up and waits for its claim to go; the grant if it had committed first. */
    Optional<G> giveUp(Duration requestTimeout) {
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
                    return; // the withdrawal goes on in the background; unrenewed, the claim expires anyway
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

    @Override
    public String toString() {
        return "claim " + key;
    }
}
