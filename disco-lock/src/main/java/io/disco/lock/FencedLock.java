package io.disco.lock;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A distributed {@link java.util.concurrent.locks.Lock} with the fencing token of the current hold,
 * in the manner of Hazelcast's {@code FencedLock}: what a thread of a service locks.
 *
 * <ul>
 *   <li>Ownership is per thread, and reentrant: the thread that locked holds the lock until it has
 *       unlocked as many times as it locked; the distributed claim is made on the first hold and
 *       released on the last, and {@link #token()} stays the same in between. A reentrant
 *       {@code tryLock} confirms the hold: once it was lost, {@link #tryLock()} and
 *       {@link #tryLock(long, TimeUnit)} by the holding thread return false and leave its hold count as
 *       it was (a caller that re-acquires to check that it still leads, such as Spring Integration's
 *       {@code LockRegistryLeaderInitiator}, learns of the loss); {@link #lock()} still nests. {@link #unlock()} and
 *       {@link #token()} by a thread that does not hold the lock throw
 *       {@link IllegalMonitorStateException}, as {@code ReentrantLock} does.</li>
 *   <li>The threads of one JVM queue locally and fairly; only the local holder takes part in the
 *       distributed queue, so one process makes at most one claim per name at a time.</li>
 *   <li>Every way of giving up (interruption in {@link #lockInterruptibly()}, a timeout in
 *       {@link #tryLock(long, TimeUnit)}, a failure) withdraws the claim and releases the local
 *       lock; nothing is left behind in the backend.</li>
 *   <li>{@link #lock()} ignores interruption, as {@code Lock.lock()} must (the interrupt status is
 *       kept); its failures are the service's: {@link LockLostException}, or
 *       {@link io.disco.fencing.DiscoException} when the backend fails.</li>
 *   <li>Lease loss while held: the lock stays held by its thread until it unlocks, {@link #done()}
 *       completes and {@link #err()} tells the loss; {@link #token()} throws the loss (the token is
 *       stale, a guarded resource rejects it) and the last {@link #unlock()} throws it too, after
 *       releasing the local lock.</li>
 *   <li>Timeouts ({@link #tryLock(long, TimeUnit)}, {@link #hold(Duration)}) follow
 *       {@link io.disco.fencing.Timeouts}' rule: zero or less is one try, at once (as {@link #tryLock()}), and one
 *       too long to count in nanoseconds is no limit. An interruptible acquisition whose thread is interrupted on
 *       entry throws {@link InterruptedException} and claims nothing.</li>
 *   <li>{@link #newCondition()} is not supported: a condition would have to release and reacquire the
 *       distributed lock, which changes the token under the caller's feet.</li>
 * </ul>
 *
 * <p>This module holds the interface only. Its implementations live in disco-client, the one front end of the
 * thread-owned, self-healing handles: {@code io.disco.client.FencedLocks.of(service)}, a view of one
 * {@link LockService} (finished when that service is), and the locks of {@code io.disco.client.Disco}, which
 * claim through the owner of the moment and so outlive a lost lease.
 */
public interface FencedLock extends Lock, Fenced {

    /**
     * The token of the current thread's hold: attach it to every request to a guarded resource.
     *
     * @return the token, the same for every nested hold
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws DiscoException the primitive's lost exception ({@link LockLostException} for a lock)
     *         if the hold was lost: the token is stale
     */
    @Override
    FencingToken token();

    /**
     * Releases one hold; the last one releases the distributed lock. Not interruptible: with the
     * interrupt status set it completes all the same (at most the request timeout) and keeps the status.
     *
     * <p>Without an answer from the backend in time, a {@code DiscoException} that is not a loss is thrown
     * and the hold is given up all the same: the thread no longer holds, the token must not be used, and
     * the release goes on in the background; no thread of this process is granted the lock before it is
     * confirmed, and the next hold has a newer token. When the backend refuses the release for good (a
     * permission taken away), the failure is thrown and the thread still holds: it may retry.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws DiscoException the primitive's lost exception if the hold was lost before it was
     *         released (the lock is released locally all the same); or, not a loss, the backend's failure
     *         to answer or its refusal, as above
     */
    @Override
    void unlock();

    /** @return whether the current thread holds the lock */
    boolean isHeldByCurrentThread();

    /** @return how many times the current thread holds the lock (0 if it does not) */
    int getHoldCount();

    /**
     * Not supported: waiting on a condition would release and reacquire the distributed lock, and change the
     * fencing token.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    default Condition newCondition() {
        throw new UnsupportedOperationException("FencedLock has no conditions: waiting on one would release and"
                + " reacquire the distributed lock, and change the fencing token");
    }

    /**
     * Completes, normally, when the current thread's hold ends: it was released, or its lease was lost
     * ({@link #err()} then tells). Its dependent actions run on the backend's callback executor.
     *
     * @return a stage that completes when the current hold ends
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     */
    CompletionStage<Void> done();

    /**
     * The loss of the current thread's hold, if it was lost.
     *
     * @return the loss, or empty while the hold is valid
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     */
    Optional<? extends DiscoException> err();

    /**
     * This lock, with a maximum hold time for the acquisitions made through the returned view (Redisson's
     * {@code leaseTime}, ShedLock's {@code lockAtMostFor}): a safety net against a holder that hangs.
     *
     * <ul>
     *   <li>It counts from the moment the distributed lock is acquired, for a thread's first hold; a
     *       nested acquisition (the thread already holds) keeps the first hold's deadline, and an
     *       acquisition through another view, or through this lock, while the thread holds changes
     *       nothing either.</li>
     *   <li>When it passes before the thread's last {@link #unlock()}, the distributed lock is released
     *       (another process may acquire it at once, with a higher token) and the hold is lost:
     *       {@link #done()} completes, {@link #err()} and {@link #token()} tell the loss
     *       ({@link LockLostException}), and the last {@link #unlock()} throws it after releasing the
     *       local lock. The timer runs on a thread of the library's own that only starts the release;
     *       no user code runs there.</li>
     *   <li>The local lock is the thread's until it unlocks, as after a lost lease: this process's other
     *       threads on the name still wait for that thread. The maximum hold time frees the name for
     *       other processes, not for the threads queued behind a hung one.</li>
     *   <li>The view is this lock: ownership, reentrancy, {@link #unlock()} and {@link #token()} are
     *       shared; only the acquisitions made through it carry the maximum hold time. Without a view,
     *       nothing changes.</li>
     * </ul>
     *
     * <pre>{@code
     * FencedLock lock = disco.lock("/jobs/nightly").withMaxHold(Duration.ofMinutes(10));
     * if (lock.tryLock()) { // ShedLock's lockAtMostFor
     *     try {
     *         job.run(lock.token());
     *     } finally {
     *         lock.unlock(); // throws LockLostException if the job ran past 10 minutes
     *     }
     * }
     * }</pre>
     *
     * <p>The default refuses: the locks of disco-client ({@code FencedLocks.of(service)}, {@code Disco.lock(name)})
     * support it.
     *
     * @param maxHold the longest time a first hold may last, positive
     * @return a view of this lock whose acquisitions end after {@code maxHold}
     * @throws NullPointerException if {@code maxHold} is null
     * @throws IllegalArgumentException if {@code maxHold} is not positive
     * @throws UnsupportedOperationException if this lock has no maximum hold times
     */
    default FencedLock withMaxHold(Duration maxHold) {
        Objects.requireNonNull(maxHold, "maxHold");
        throw new UnsupportedOperationException(this + " has no maximum hold time");
    }

    /**
     * Acquires without blocking the caller. Ownership of a {@code FencedLock} is a thread's, so the hold
     * this hands out belongs to no thread of the caller's: it is a {@link Held} that whoever holds it
     * closes (from any thread), once.
     *
     * <ul>
     *   <li>The acquisition queues like a thread of this process (it has one of its own, a daemon thread
     *       made for it, which waits in the lock's queue, holds the lock while the hold is open, and runs no
     *       user code); while it holds, every thread of the caller's, the caller included, is excluded
     *       like any other thread: {@link #isHeldByCurrentThread()} is false for them, and
     *       {@link #lock()} waits for the close. No reentrancy across an asynchronous hold.</li>
     *   <li>{@code cancel} (or any exceptional completion by the caller) withdraws the claim and leaves
     *       nothing in the backend; a hold acquired at that moment is released at once.</li>
     *   <li>The future completes on the common pool ({@link java.util.concurrent.ForkJoinPool#commonPool()}),
     *       exceptionally with what {@link #lockInterruptibly()} throws.</li>
     *   <li>The hold's {@link FencedHold#token()}, {@link FencedHold#done()} and {@link FencedHold#err()}
     *       work from any thread; closing it unlocks and throws what {@link #unlock()} throws (the loss, if
     *       the hold was lost). An acquisition through {@link #withMaxHold(Duration)} keeps its maximum
     *       hold time.</li>
     *   <li>Cost: one thread per pending or held asynchronous acquisition; close the hold.</li>
     * </ul>
     *
     * <pre>{@code
     * lock.lockAsync().thenAccept(held -> {
     *     try (held) {
     *         resource.write(data, held.token());
     *     }
     * });
     * }</pre>
     *
     * <p>The default refuses: the locks of disco-client ({@code FencedLocks.of(service)}, {@code Disco.lock(name)}
     * and its read/write locks) support it.
     *
     * @return the pending acquisition; cancel it to give up
     * @throws UnsupportedOperationException if this lock has no asynchronous acquisitions
     */
    default CompletableFuture<Held<FencedHold>> lockAsync() {
        throw new UnsupportedOperationException(this + " has no asynchronous acquisitions");
    }

    /**
     * Locks for one critical section, waiting at most {@code timeout}: closing the returned hold
     * unlocks once. A hold is tied to its own acquisition: closing an inner hold of a reentrant
     * acquisition releases that inner hold only, never the outer one.
     *
     * <pre>{@code
     * try (Held<FencedLock> held = lock.hold(Duration.ofSeconds(3))) {
     *     resource.write(data, held.token());
     * }
     * }</pre>
     *
     * <p>The timeout follows {@link io.disco.fencing.Timeouts}' rule: zero or negative takes the lock only if it
     * is free now (one try, as {@link #tryLock()}), and one too long to count in nanoseconds waits without a limit.
     *
     * @param timeout the longest time to wait; zero or less: only if free now
     * @return the hold; close it on the thread that acquired it
     * @throws NullPointerException if {@code timeout} is null
     * @throws TimeoutException if the lock was not acquired in time; the claim is withdrawn
     * @throws InterruptedException if interrupted on entry or while waiting; the claim is withdrawn
     */
    default Held<FencedLock> hold(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout");
        if (!tryLock(Timeouts.nanos(timeout), TimeUnit.NANOSECONDS)) {
            throw new TimeoutException("not acquired within " + Timeouts.describe(timeout) + ": " + this);
        }
        return Held.of(this, this::unlock);
    }
}
