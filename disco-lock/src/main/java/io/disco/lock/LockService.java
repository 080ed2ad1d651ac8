package io.disco.lock;

import io.disco.fencing.DiscoService;
import io.disco.fencing.Held;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * A distributed mutual-exclusion lock with fencing tokens.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>At most one owner holds the lock at a time, as long as every owner's lease is alive. Each
 *       acquisition returns a {@link Grant} whose {@linkplain Grant#token() token} is strictly greater
 *       than every earlier acquisition's, so a resource that rejects lower tokens (a guard) rejects
 *       a stale owner even if that owner does not yet know it lost the lock.</li>
 *   <li>One service is one owner. {@link #lock()} while this service already holds the lock returns
 *       the held grant. Starting a second acquisition while one of this service is still waiting
 *       fails with {@link IllegalStateException}: use one service per concurrent owner.</li>
 *   <li>Ownership lives as long as the service's lease and its key. When the lease is lost (expired
 *       after a pause or partition, revoked, or the backend unreachable for longer than its TTL), or
 *       the held key is deleted by anybody else,
 *       {@link #done()} completes and {@link #err()} holds a {@link LockLostException}; a pending
 *       acquisition fails with that exception and every later call to acquire fails at once. A
 *       service whose lease is lost is finished: create a new one.</li>
 *   <li>Every way of giving up an acquisition (timeout, interruption, cancellation, failure) withdraws
 *       this owner's claim from the backend, so it never blocks anybody.
 *       When the backend refuses the withdrawal for a reason retrying cannot cure (a permission
 *       taken away), the claim blocks others for at most one lease TTL: the lease that carries it is
 *       given up (the etcd provider stops renewing it, so it expires on the server), which is reported
 *       at once as the loss of this service and of every other service on the same lease.</li>
 *   <li>Backend failures surface as {@link io.disco.fencing.DiscoException} with the backend's exception
 *       as cause; a backend that does not answer in time gives a timely exception, never a hang.</li>
 *   <li>Threads: every future this service hands out ({@code *Async} acquisitions, {@link #done()})
 *       completes on the implementation's callback executor, never on a thread that keeps the lease
 *       alive or detects its loss (the etcd provider: {@code EtcdOptions.Builder.callbackExecutor},
 *       by default a pool of daemon threads). Dependent actions may block, or call back into this or
 *       another service, without delaying renewal or {@code done()}.</li>
 *   <li>A closed service never hands out a grant: {@link #close()} fails a pending acquisition with
 *       {@link IllegalStateException} and leaves nothing of this owner in the backend.</li>
 *   <li>Implementations are thread-safe, and never use an object handed to the caller (this service,
 *       its session) as an internal lock.</li>
 * </ul>
 *
 * <h2>Who closes what</h2>
 * {@link #close()} releases the lock if held and withdraws a pending acquisition. A service that was
 * created with its own session also revokes that session's lease; a service created on a shared
 * session leaves the session open. Nothing in this library closes the backend client the caller
 * passed in.
 */
public interface LockService extends DiscoService<Grant, LockLostException> {

    /**
     * Acquires the lock, waiting as long as it takes.
     *
     * @return the grant of this acquisition, or the held grant if this service already holds the lock
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws LockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if another acquisition of this service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Grant lock() throws InterruptedException;

    /**
     * Acquires the lock, waiting at most {@code timeout}: zero or less acquires only if the lock is free now (one
     * try, as {@link #tryLock()}), and a timeout too long to count in nanoseconds waits without a limit (the rule of
     * {@link io.disco.fencing.Timeouts}).
     *
     * @param timeout the longest time to wait; zero or less: only if free now
     * @return the grant of this acquisition, or the held grant if this service already holds the lock
     * @throws NullPointerException if {@code timeout} is null (the method without a timeout waits without a limit)
     * @throws TimeoutException if another owner still held the lock when the timeout expired (or, zero or less, was
     *         in the way); the claim is withdrawn
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws LockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if another acquisition of this service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed, or did not answer at all within the timeout
     */
    Grant lock(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Acquires the lock only if nobody else holds it or waits for it ahead of this owner.
     *
     * @return the grant, or empty if another owner is in the way (this owner's claim is withdrawn)
     * @throws LockLostException if the lease is lost
     * @throws IllegalStateException if another acquisition of this service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Optional<Grant> tryLock();

    /**
     * Starts acquiring the lock without blocking the caller.
     *
     * <p>The future completes with the grant, or exceptionally with the exceptions {@link #lock()}
     * names. {@code cancel(true|false)} (or {@code completeExceptionally})
     * withdraws the claim from the backend and returns true, unless the grant was already committed:
     * it then returns false and the future completes with the grant. Never neither. The future
     * completes on the callback executor (see the class comment).
     *
     * @return the pending acquisition
     * @throws IllegalStateException if another acquisition of this service is in progress, or the service is closed
     */
    CompletableFuture<Grant> lockAsync();

    /**
     * Releases the lock if this service holds it; does nothing otherwise. Not interruptible: a thread
     * whose interrupt status is set completes the release (waiting at most the request timeout) and
     * keeps the status.
     *
     * <p>If the backend does not answer within the request timeout, the outcome is unknown: a
     * {@link io.disco.fencing.DiscoException} (not a loss) is thrown and the grant is given up at once
     * ({@link #held()} is empty; its token must not be used). The release goes on in the background
     * until the backend answers or the lease ends, and this service hands out no grant before it is
     * confirmed: {@link #tryLock()} finds it in the way, and any other acquisition waits for it, then
     * claims anew with a new token. Calling this again waits for that same release. If the backend
     * refuses the release for good (a permission taken away), the failure is thrown and the grant is
     * still held: the call can be retried.
     *
     * <p>If the grant was lost before this call (its lease expired or was revoked, or its key was
     * deleted by anybody else) the loss is thrown, so that an owner that was paused learns that it
     * had lost: its writes since the loss may have been rejected, or overtaken by the next owner's.
     *
     * @throws LockLostException if the grant held by this service was lost before it was released
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    void unlock();

    /**
     * The held grant, if this service holds the lock and its lease has not been lost.
     *
     * @return the held grant, or empty
     */
    Optional<Grant> held();

    /**
     * Completes, once, when this service's lease is lost or the service is closed. It is a property
     * of the service's lifetime, not of any single acquisition. It always completes normally; ask
     * {@link #err()} whether the reason was a loss.
     *
     * @return a stage that completes when the service is finished
     */
    CompletionStage<Void> done();

    /**
     * The reason the lease was lost, once {@link #done()} completed because of a loss.
     *
     * @return the loss, or empty while the service is healthy or after a plain {@link #close()}
     */
    Optional<LockLostException> err();

    /**
     * Like {@link #unlock()}, without blocking the caller. The future completes on the callback
     * executor: normally once the lock is released (or if nothing was held), exceptionally with the
     * exceptions {@link #unlock()} names. Cancelling the future does not stop the release.
     *
     * @return the pending release
     */
    CompletableFuture<Void> unlockAsync();

    /**
     * Acquires the lock for one critical section: closing the returned hold releases the lock (not
     * the service); see {@link Held}.
     *
     * @param timeout the longest time to wait; zero or less: only if free now (see {@link #lock(Duration)})
     * @return the held grant
     * @throws TimeoutException if the lock was not acquired in time; the claim is withdrawn
     * @throws InterruptedException if interrupted while waiting; the claim is withdrawn
     * @throws LockLostException if the lease was lost before or while waiting
     */
    default Held<Grant> hold(Duration timeout) throws InterruptedException, TimeoutException {
        return Held.of(lock(timeout), this::unlock);
    }

    /**
     * Like {@link #close()}, without blocking the caller: the future completes, off the session's
     * threads (on the callback executor), once the close has finished.
     *
     * @return the pending close
     */
    CompletableFuture<Void> closeAsync();

    /**
     * Releases the lock if held, withdraws a pending acquisition, and completes {@link #done()}.
     * Revokes the lease if the service owns its session. Idempotent.
     */
    @Override
    void close();
}
