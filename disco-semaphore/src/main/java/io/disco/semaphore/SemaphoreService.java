package io.disco.semaphore;

import io.disco.fencing.DiscoService;
import io.disco.fencing.Held;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * A distributed counting semaphore with fenced permits: at most {@link #limit()} holders at a time,
 * each with a {@link Permit} whose slot and token a resource checks per slot.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>At most {@code limit} services hold a permit at a time, as long as every holder's lease is
 *       alive. Holders are admitted in the order they asked: a holder is admitted once fewer than
 *       {@code limit} holders that asked before it remain.</li>
 *   <li>One service is one holder of one permit. {@link #acquire()} while holding returns the held
 *       permit; a second acquisition while one is waiting fails with {@link IllegalStateException}.</li>
 *   <li>Each permit has a slot no other current holder has, and a token strictly greater than every
 *       earlier holder's of that slot (see {@link Permit}).</li>
 *   <li>The limit is fixed per name: every service on one name must use the same limit. A service
 *       whose limit differs from the one recorded for the name fails at creation.</li>
 *   <li>Lease loss: {@link #done()} completes, {@link #err()} holds a {@link SemaphoreLostException},
 *       a pending acquisition fails with it, the next {@link #release()} throws it. A lost service is
 *       finished.</li>
 *   <li>Every way of giving up (timeout, interruption, cancellation, failure, close) withdraws the
 *       claim and leaves no key of this holder behind.
 *       When the backend refuses the withdrawal for a reason retrying cannot cure (a permission
 *       taken away), the claim blocks others for at most one lease TTL: the lease that carries it is
 *       given up (the etcd provider stops renewing it, so it expires on the server), which is reported
 *       at once as the loss of this service and of every other service on the same lease.</li>
 *   <li>Futures complete on the implementation's callback executor, never on a thread that keeps the
 *       lease alive.</li>
 * </ul>
 * {@link #close()} releases a held permit and withdraws a pending acquisition; a service with its own
 * session revokes it. Nothing here closes the caller's backend client.
 */
public interface SemaphoreService extends DiscoService<Permit, SemaphoreLostException> {

    /**
     * Acquires a permit, waiting as long as it takes.
     *
     * @return the permit
     * @throws InterruptedException if interrupted on entry (nothing is claimed) or while waiting (the claim is
     *     withdrawn)
     * @throws SemaphoreLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if another acquisition of this service is in progress, or it is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Permit acquire() throws InterruptedException;

    /**
     * Acquires a permit, waiting at most {@code timeout}: zero or less acquires only if a permit is free now (one
     * try, as {@link #tryAcquire()}), and a timeout too long to count in nanoseconds waits without a limit (the
     * rule of {@link io.disco.fencing.Timeouts}).
     *
     * @param timeout the longest wait; zero or less: only if a permit is free now
     * @return the permit
     * @throws NullPointerException if {@code timeout} is null (the method without a timeout waits without a limit)
     * @throws TimeoutException if no permit came in time; the claim is withdrawn
     * @throws InterruptedException if interrupted on entry (nothing is claimed) or while waiting (the claim is
     *     withdrawn)
     * @throws SemaphoreLostException if the lease was lost before or while waiting
     */
    Permit acquire(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Acquires a permit only if one is free now.
     *
     * @return the permit, or empty (the claim withdrawn) if {@code limit} holders asked first
     */
    Optional<Permit> tryAcquire();

    /**
     * Starts an acquisition without blocking; cancelling the future withdraws the claim unless the
     * permit was already committed (then it returns false and the future completes with it).
     *
     * @return the pending acquisition, completed on the callback executor
     */
    CompletableFuture<Permit> acquireAsync();

    /**
     * Releases the held permit (its holder key and its slot); does nothing if none is held. Not
     * interruptible (the interrupt status is kept). Without an answer in time the permit is given up
     * ({@link #held()} empty) while the release goes on in the background, and this service hands out
     * no permit before it is confirmed; see {@code LockService.unlock()}, whose rules it follows.
     *
     * @throws SemaphoreLostException if the permit was lost before this call
     * @throws io.disco.fencing.DiscoException if the backend refused the release (still held, retry) or did
     *     not answer in time (given up, the release goes on)
     */
    void release();

    /** @return {@link #release()} without blocking, completed on the callback executor */
    CompletableFuture<Void> releaseAsync();

    /**
     * Acquires a permit for one critical section: closing the hold releases it.
     *
     * @param timeout the longest wait; zero or less: only if a permit is free now (see {@link #acquire(Duration)})
     * @return the held permit
     * @throws TimeoutException if no permit came in time
     * @throws InterruptedException if interrupted on entry or while waiting
     */
    default Held<Permit> hold(Duration timeout) throws InterruptedException, TimeoutException {
        return Held.of(acquire(timeout), this::release);
    }

    /** @return the held permit, if any */
    Optional<Permit> held();

    /** @return the semaphore's limit */
    int limit();

    /**
     * Counts the holders and waiters now registered (as the Go library's {@code Stat}).
     *
     * @return the counts; for information only
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Stat stat();

    /** @return completes once, when the lease is lost or the service closed */
    CompletionStage<Void> done();

    /** @return the loss, once {@link #done()} completed because of one */
    Optional<SemaphoreLostException> err();

    /** Releases, withdraws, and revokes an own session. Idempotent. */
    @Override
    void close();

    /** @return {@link #close()} without blocking, on the callback executor */
    CompletableFuture<Void> closeAsync();

    /**
     * Who is registered on the semaphore.
     *
     * @param limit the semaphore's limit
     * @param registered holders and waiters together (every registered key)
     */
    record Stat(int limit, long registered) {

        /** @return how many hold a permit: the first {@code limit} registered */
        public long holders() {
            return Math.min(limit, registered);
        }

        /** @return how many wait */
        public long waiting() {
            return Math.max(0, registered - limit);
        }
    }
}
