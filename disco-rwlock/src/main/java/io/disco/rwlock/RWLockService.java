package io.disco.rwlock;

import io.disco.fencing.DiscoService;
import io.disco.fencing.Held;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * A distributed read/write lock with fencing tokens: any number of readers, or one writer.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>While every owner's lease is alive, a writer never holds together with anybody, and readers
 *       hold together. Owners are admitted in the order they asked: a reader that asks while a writer
 *       is waiting queues behind that writer, so a stream of readers cannot starve writers.</li>
 *   <li>Tokens ({@link RWGrant#token()}): a write grant's token is strictly greater than every
 *       earlier grant's; every reader admitted between the same two writers holds the same token,
 *       strictly between theirs. A resource that rejects lower tokens (a guard) therefore accepts the
 *       readers of the current phase together and rejects a stale owner, reader or writer, even if that
 *       owner does not yet know it lost the lock.</li>
 *   <li>One service is one owner, in one mode at a time. {@link #rLock()} while holding a read grant
 *       (and {@link #lock()} while holding a write grant) returns the held grant. There is no upgrade
 *       or downgrade: asking for the other mode while holding one fails with
 *       {@link IllegalStateException}, as does releasing the mode not held ({@link #rUnlock()} while
 *       holding a write grant, {@link #unlock()} while holding a read grant), which releases nothing.
 *       Starting a second acquisition while one of this service is still waiting fails with
 *       {@link IllegalStateException}: use one service per concurrent owner.</li>
 *   <li>Ownership lives as long as the service's lease. When the lease is lost (expired after a
 *       pause or partition, revoked, or the backend unreachable for longer than its TTL),
 *       {@link #done()} completes and {@link #err()} holds a {@link RWLockLostException}; a pending
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
 * {@link #close()} releases the grant if held and withdraws a pending acquisition. A service that was
 * created with its own session also revokes that session's lease; a service created on a shared
 * session leaves the session open. Nothing in this library closes the backend client the caller
 * passed in.
 */
public interface RWLockService extends DiscoService<RWGrant, RWLockLostException> {

    // ---------------------------------------------------------------- read (shared)

    /**
     * Acquires a read grant, waiting as long as it takes (for every writer that asked earlier).
     *
     * @return the read grant, or the held one if this service already holds a read grant
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws RWLockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if this service holds a write grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    RWGrant rLock() throws InterruptedException;

    /**
     * Acquires a read grant, waiting at most {@code timeout}: zero or less acquires only if no writer is in the way
     * now (one try, as {@link #tryRLock()}), and a timeout too long to count in nanoseconds waits without a limit
     * (the rule of {@link io.disco.fencing.Timeouts}).
     *
     * @param timeout the longest time to wait; zero or less: only if free now
     * @return the read grant, or the held one if this service already holds a read grant
     * @throws NullPointerException if {@code timeout} is null (the method without a timeout waits without a limit)
     * @throws TimeoutException if a writer was still ahead when the timeout expired; the claim is withdrawn
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws RWLockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if this service holds a write grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed, or did not answer at all within the timeout
     */
    RWGrant rLock(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Acquires a read grant only if no writer holds the lock or waits for it ahead of this owner.
     *
     * @return the read grant, or empty if a writer is in the way (this owner's claim is withdrawn)
     * @throws RWLockLostException if the lease is lost
     * @throws IllegalStateException if this service holds a write grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Optional<RWGrant> tryRLock();

    /**
     * Starts acquiring a read grant without blocking the caller.
     *
     * <p>The future completes with the grant, or exceptionally with the exceptions {@link #rLock()}
     * names. {@code cancel(true|false)} (or {@code completeExceptionally})
     * withdraws the claim from the backend and returns true, unless the grant was already committed:
     * it then returns false and the future completes with the grant. Never neither. The future
     * completes on the callback executor (see the class comment).
     *
     * @return the pending acquisition
     * @throws IllegalStateException if this service holds a write grant, another acquisition of this
     *         service is in progress, or the service is closed
     */
    CompletableFuture<RWGrant> rLockAsync();

    /**
     * Releases the read grant if this service holds one; does nothing if it holds nothing. Not
     * interruptible; without an answer in time the grant is given up and the release goes on in the
     * background, and when the backend refuses it the grant is still held (see
     * {@code LockService.unlock()}, whose rules it follows).
     *
     * <p>If the grant was lost before this call (its lease expired or was revoked, or its key was
     * deleted by anybody else) the loss is thrown, so that an owner that was paused learns that it
     * had lost.
     *
     * @throws RWLockLostException if the read grant was lost before it was released
     * @throws IllegalStateException if this service holds a write grant (nothing is released)
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    void rUnlock();

    /**
     * Whether a writer, of any process, has queued behind the read grant this service holds: it waits for
     * this grant's release. A process that shares one read grant among its threads must then let no more
     * of them join it, or a writer elsewhere waits for as long as their holds overlap. Cheap: no request;
     * it may lag the backend by about one round trip.
     *
     * @return true once a writer waits behind the held read grant; false while none does, or when no read
     *     grant is held
     */
    boolean writerWaiting();

    // ---------------------------------------------------------------- write (exclusive)

    /**
     * Acquires the write grant, waiting as long as it takes (for every reader and writer that asked earlier).
     *
     * @return the write grant, or the held one if this service already holds the write grant
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws RWLockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if this service holds a read grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    RWGrant lock() throws InterruptedException;

    /**
     * Acquires the write grant, waiting at most {@code timeout}: zero or less acquires only if nobody is in the way
     * now (one try, as {@link #tryLock()}), and a timeout too long to count in nanoseconds waits without a limit
     * (the rule of {@link io.disco.fencing.Timeouts}).
     *
     * @param timeout the longest time to wait; zero or less: only if free now
     * @return the write grant, or the held one if this service already holds the write grant
     * @throws NullPointerException if {@code timeout} is null (the method without a timeout waits without a limit)
     * @throws TimeoutException if another owner was still ahead when the timeout expired; the claim is withdrawn
     * @throws InterruptedException if the thread is interrupted on entry (nothing is claimed) or while waiting (the
     *         claim is withdrawn)
     * @throws RWLockLostException if the lease was lost before or while waiting
     * @throws IllegalStateException if this service holds a read grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed, or did not answer at all within the timeout
     */
    RWGrant lock(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Acquires the write grant only if nobody holds the lock or waits for it ahead of this owner.
     *
     * @return the write grant, or empty if another owner is in the way (this owner's claim is withdrawn)
     * @throws RWLockLostException if the lease is lost
     * @throws IllegalStateException if this service holds a read grant, another acquisition of this
     *         service is in progress, or the service is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Optional<RWGrant> tryLock();

    /**
     * Starts acquiring the write grant without blocking the caller.
     *
     * <p>The future completes with the grant, or exceptionally with the exceptions {@link #lock()}
     * names. {@code cancel(true|false)} (or {@code completeExceptionally})
     * withdraws the claim from the backend and returns true, unless the grant was already committed:
     * it then returns false and the future completes with the grant. Never neither. The future
     * completes on the callback executor (see the class comment).
     *
     * @return the pending acquisition
     * @throws IllegalStateException if this service holds a read grant, another acquisition of this
     *         service is in progress, or the service is closed
     */
    CompletableFuture<RWGrant> lockAsync();

    /**
     * Releases the write grant if this service holds it; does nothing if it holds nothing. If the
     * backend cannot be reached the exception is thrown and the service still considers itself the
     * holder, so the call can be retried (the lease expiry releases the grant in any case).
     *
     * <p>If the grant was lost before this call (its lease expired or was revoked, or its key was
     * deleted by anybody else) the loss is thrown, so that an owner that was paused learns that it
     * had lost.
     *
     * @throws RWLockLostException if the write grant was lost before it was released
     * @throws IllegalStateException if this service holds a read grant (nothing is released)
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    void unlock();

    // ---------------------------------------------------------------- lifetime

    /**
     * The held grant, read or write, if this service holds one and its lease has not been lost.
     *
     * @return the held grant, or empty
     */
    Optional<RWGrant> held();

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
    Optional<RWLockLostException> err();

    /**
     * Like {@link #rUnlock()}, without blocking the caller; completes on the callback executor, as
     * {@code LockService.unlockAsync()} does.
     *
     * @return the pending release
     */
    CompletableFuture<Void> rUnlockAsync();

    /**
     * Like {@link #unlock()}, without blocking the caller; completes on the callback executor.
     *
     * @return the pending release
     */
    CompletableFuture<Void> unlockAsync();

    /**
     * Acquires a read hold for one critical section: closing the returned hold calls {@link #rUnlock()}.
     *
     * @param timeout the longest time to wait; zero or less: only if free now (see {@link #rLock(Duration)})
     * @return the held read grant
     * @throws TimeoutException if not admitted in time; the claim is withdrawn
     * @throws InterruptedException if interrupted while waiting; the claim is withdrawn
     */
    default Held<RWGrant> holdRead(Duration timeout) throws InterruptedException, TimeoutException {
        return Held.of(rLock(timeout), this::rUnlock);
    }

    /**
     * Acquires the write hold for one critical section: closing the returned hold calls {@link #unlock()}.
     *
     * @param timeout the longest time to wait; zero or less: only if free now (see {@link #lock(Duration)})
     * @return the held write grant
     * @throws TimeoutException if not admitted in time; the claim is withdrawn
     * @throws InterruptedException if interrupted while waiting; the claim is withdrawn
     */
    default Held<RWGrant> holdWrite(Duration timeout) throws InterruptedException, TimeoutException {
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
     * Releases the held grant, withdraws a pending acquisition, and completes {@link #done()}.
     * Revokes the lease if the service owns its session. Idempotent.
     */
    @Override
    void close();
}
