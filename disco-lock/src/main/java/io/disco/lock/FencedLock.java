package io.disco.lock;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link java.util.concurrent.locks.Lock} view of a {@link LockService}, with the fencing token of
 * the current hold, in the manner of Hazelcast's {@code FencedLock}.
 *
 * <ul>
 *   <li>Ownership is per thread, and reentrant: the thread that locked holds the view until it has
 *       unlocked as many times as it locked; the distributed lock is acquired on the first hold and
 *       released on the last, and {@link #token()} stays the same in between. An {@link #unlock()} by
 *       a thread that does not hold the view throws {@link IllegalMonitorStateException}.</li>
 *   <li>One view serves many threads of this JVM: they queue locally (a fair {@link ReentrantLock}),
 *       and only the local holder takes part in the distributed queue, through the one service.</li>
 *   <li>Every way of giving up (interruption in {@link #lockInterruptibly()}, a timeout in
 *       {@link #tryLock(long, TimeUnit)}, a failure) withdraws the claim and releases the local
 *       lock; nothing is left behind in the backend.</li>
 *   <li>{@link #lock()} ignores interruption, as {@code Lock.lock()} must (the interrupt status is
 *       kept); its failures are the service's: {@link LockLostException} once the lease is lost,
 *       {@link io.disco.fencing.DiscoException} when the backend fails.</li>
 *   <li>Lease loss while held: the view stays held by its thread until it unlocks, and that
 *       {@link #unlock()} throws the {@link LockLostException} after releasing the local lock. Until
 *       then the token is stale and a guarded resource rejects it. The service is finished after a
 *       loss: make a new service and a new view.</li>
 *   <li>{@link #newCondition()} is not supported: a condition would have to release and reacquire the
 *       distributed lock, which changes the token under the caller's feet.</li>
 * </ul>
 * The view does not own the service: closing the service is the caller's duty (and ends the view).
 */
public final class FencedLock implements Lock, Fenced {

    private final LockService service;
    private final ReentrantLock local = new ReentrantLock(true);
    /** The distributed grant while a thread holds the view; written and read by the holder only. */
    private Grant grant;

    private FencedLock(LockService service) {
        this.service = service;
    }

    /**
     * A view of {@code service}. One view per service: two views of one service would both think
     * they own its single grant.
     *
     * @param service the lock service; the view never closes it
     * @return the view
     */
    public static FencedLock of(LockService service) {
        return new FencedLock(Objects.requireNonNull(service, "service"));
    }

    /** Acquires, ignoring interruption (the interrupt status is restored on return). */
    @Override
    public void lock() {
        local.lock();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            grant = service.lockAsync().join(); // uninterruptible, keeps the claim's place in the queue
        } catch (java.util.concurrent.CompletionException e) {
            local.unlock();
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            grant = service.lock();
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /** Acquires only if both the local and the distributed lock are free right now; one round trip to the backend. */
    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return true;
        }
        try {
            Optional<Grant> g = service.tryLock();
            if (g.isPresent()) {
                grant = g.get();
                return true;
            }
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        local.unlock();
        return false;
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(time);
        if (!local.tryLock(time, unit)) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return true;
        }
        try {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                Optional<Grant> g = service.tryLock();
                if (g.isPresent()) {
                    grant = g.get();
                    return true;
                }
            } else {
                grant = service.lock(Duration.ofNanos(left));
                return true;
            }
        } catch (TimeoutException e) {
            // the claim was withdrawn by the service
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        local.unlock();
        return false;
    }

    /**
     * Releases one hold; the last one releases the distributed lock.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the view
     * @throws LockLostException if the grant was lost while held (the view is released all the same)
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("this thread does not hold the fenced lock");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        try {
            service.unlock();
        } finally {
            grant = null;
            local.unlock();
        }
    }

    /**
     * The token of the current thread's hold: attach it to every request to a guarded resource.
     *
     * @return the token, the same for every nested hold
     * @throws IllegalMonitorStateException if the current thread does not hold the view
     */
    @Override
    public FencingToken token() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("this thread does not hold the fenced lock");
        }
        return grant.token();
    }

    /** @return whether the current thread holds the view */
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** @return how many times the current thread holds the view (0 if it does not) */
    public int getHoldCount() {
        return local.getHoldCount();
    }

    /**
     * Not supported.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("FencedLock has no conditions: waiting on one would release and"
                + " reacquire the distributed lock, and change the fencing token");
    }

    @Override
    public String toString() {
        return "FencedLock[" + service + (local.isLocked() ? ", held" : ", free") + "]";
    }
}
