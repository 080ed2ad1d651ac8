package io.disco.lock;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.LossGrace;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The {@link FencedLock}: a fair local lock in front of one distributed claim at a time, made through
 * the service its supplier names at the moment of the claim.
 */
final class QueuedFencedLock implements FencedLock {

    /** How the local holder waits for the distributed lock. */
    private enum Wait {
        /** {@code lock()}: as long as it takes, ignoring interruption. */
        UNINTERRUPTIBLY,
        /** {@code lockInterruptibly()} and {@code tryLock(time)}: until the deadline (if any), interruptibly. */
        INTERRUPTIBLY,
        /** {@code tryLock()}: only if free now. */
        NOT_AT_ALL
    }

    private final Supplier<? extends CompletionStage<LockService>> services;
    private final String description;
    private final ReentrantLock local = new ReentrantLock(true);
    /** The current hold; written by the holder (published by {@code local}), read by {@link #watch}'s callback. */
    private volatile HeldClaim held;
    /** The service whose end ends the hold made through it: watched once per service, not once per hold. */
    private LockService watched;

    QueuedFencedLock(Supplier<? extends CompletionStage<LockService>> services, String description) {
        this.services = services;
        this.description = description;
    }

    /** Acquires, ignoring interruption (the interrupt status is kept). */
    @Override
    public void lock() {
        lock(0);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInterruptibly(0);
    }

    @Override
    public boolean tryLock() {
        return tryLock(0);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(time, unit, 0);
    }

    /**
     * @throws IllegalArgumentException if {@code maxHold} is not positive
     */
    @Override
    public FencedLock withMaxHold(Duration maxHold) {
        long nanos = MaxHold.nanos(maxHold);
        return new MaxHoldView(nanos);
    }

    /** {@code maxHoldNanos}: the maximum hold time of a first hold, 0 for none. */
    private void lock(long maxHoldNanos) {
        local.lock();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            claim(Wait.UNINTERRUPTIBLY, 0, maxHoldNanos);
        } catch (InterruptedException | TimeoutException e) {
            local.unlock();
            throw new AssertionError("an uninterruptible, unbounded wait ended with " + e, e);
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    private void lockInterruptibly(long maxHoldNanos) throws InterruptedException {
        local.lockInterruptibly();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            claim(Wait.INTERRUPTIBLY, Long.MAX_VALUE, maxHoldNanos);
        } catch (TimeoutException e) {
            local.unlock();
            throw new AssertionError("an unbounded wait timed out", e);
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /** Acquires only if both the local and the distributed lock are free right now; one round trip to the backend. */
    private boolean tryLock(long maxHoldNanos) {
        if (!local.tryLock()) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return stillValid();
        }
        try {
            if (claim(Wait.NOT_AT_ALL, 0, maxHoldNanos)) {
                return true;
            }
        } catch (InterruptedException | TimeoutException e) {
            local.unlock();
            throw new AssertionError("tryLock() does not wait", e);
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        local.unlock();
        return false;
    }

    private boolean tryLock(long time, TimeUnit unit, long maxHoldNanos) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(time);
        if (!local.tryLock(time, unit)) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return stillValid();
        }
        try {
            if (claim(deadline - System.nanoTime() <= 0 ? Wait.NOT_AT_ALL : Wait.INTERRUPTIBLY, deadline, maxHoldNanos)) {
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
     * A reentrant {@code tryLock}: it confirms the outer hold, and takes back its own local hold (the count
     * is unchanged) if that hold was lost, so that a caller re-acquiring to check that it still holds
     * learns of the loss.
     */
    private boolean stillValid() {
        if (held.loss().isPresent()) {
            local.unlock();
            return false;
        }
        return true;
    }

    /**
     * Makes the distributed claim for the local holder. A claim lost while waiting held nothing: it is
     * made again through the service the supplier gives then, unless that service is finished (its
     * own loss is then thrown).
     *
     * @return whether the lock was acquired (false only for {@link Wait#NOT_AT_ALL})
     */
    private boolean claim(Wait wait, long deadline, long maxHoldNanos) throws InterruptedException, TimeoutException {
        LockService lost = null; // the service whose claim was lost while it waited, if any
        while (true) {
            LockService service = service(wait, deadline);
            if (service == lost && service.err().isPresent()) {
                throw service.err().get(); // the service itself is finished: nothing to claim through
            }
            try {
                Grant g;
                switch (wait) {
                    case UNINTERRUPTIBLY -> g = joinUninterruptibly(service);
                    case NOT_AT_ALL -> {
                        Optional<Grant> now = service.tryLock();
                        if (now.isEmpty()) {
                            return false;
                        }
                        g = now.get();
                    }
                    default -> {
                        if (deadline == Long.MAX_VALUE) {
                            g = service.lock();
                        } else {
                            long left = deadline - System.nanoTime();
                            if (left <= 0) {
                                throw new TimeoutException("no time left");
                            }
                            g = service.lock(Duration.ofNanos(left));
                        }
                    }
                }
                held = new HeldClaim(service, g, description, maxHoldNanos);
                watch(service);
                return true;
            } catch (LockLostException e) {
                lost = service;
            } catch (DiscoException e) {
                if (!LossGrace.lostMeanwhile(service, maxWait(wait, deadline), wait == Wait.INTERRUPTIBLY)) {
                    throw e;
                }
                lost = service; // the failure was the loss, seen by the request before the lease's owner
            }
        }
    }

    /** Holder's thread: the end of {@code service} (lost or closed) ends the hold made through it, if any. */
    private void watch(LockService service) {
        if (watched == service) {
            return;
        }
        watched = service;
        service.done().thenRun(() -> {
            HeldClaim h = held;
            if (h != null && h.service == service) {
                h.serviceEnded();
            }
        });
    }

    /** The longest wait {@link LossGrace#lostMeanwhile} may take for an acquisition that waits as {@code wait} until {@code deadline}. */
    static long maxWait(Wait wait, long deadline) {
        return switch (wait) {
            case NOT_AT_ALL -> 0;
            case UNINTERRUPTIBLY -> Long.MAX_VALUE;
            case INTERRUPTIBLY -> deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        };
    }

    private static Grant joinUninterruptibly(LockService service) {
        try {
            return service.lockAsync().join(); // uninterruptible, keeps the claim's place in the queue
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** The service to claim through, waiting for the supplier as the acquisition may wait. */
    private LockService service(Wait wait, long deadline) throws InterruptedException, TimeoutException {
        var pending = services.get().toCompletableFuture();
        try {
            if (pending.isDone() || wait == Wait.UNINTERRUPTIBLY) {
                return pending.join();
            }
            if (wait == Wait.NOT_AT_ALL) {
                throw new TimeoutException("no service yet for " + description);
            }
            if (deadline == Long.MAX_VALUE) {
                return pending.get();
            }
            return pending.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (CompletionException | ExecutionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
        } catch (CancellationException e) {
            throw new IllegalStateException("no service for " + description + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void unlock() {
        requireHeld();
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        boolean refused = false;
        try {
            held.release();
        } catch (RuntimeException e) {
            refused = held.refused(); // the backend refused the delete: still held by this thread, which may retry
            throw e;
        } finally {
            if (!refused) {
                held = null;
                local.unlock();
            }
        }
    }

    @Override
    public FencingToken token() {
        requireHeld();
        Optional<LockLostException> loss = held.loss();
        if (loss.isPresent()) {
            throw new LockLostException("the hold of " + description + " by this thread was lost: " + loss.get().getMessage(), loss.get());
        }
        return held.grant.token();
    }

    @Override
    public CompletionStage<Void> done() {
        requireHeld();
        return held.done();
    }

    @Override
    public Optional<LockLostException> err() {
        requireHeld();
        return held.loss();
    }

    private void requireHeld() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("this thread does not hold " + description);
        }
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    @Override
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

    /** This lock, whose first holds through the view end after a maximum hold time. */
    private final class MaxHoldView implements FencedLock {

        private final long maxHoldNanos;

        MaxHoldView(long maxHoldNanos) {
            this.maxHoldNanos = maxHoldNanos;
        }

        @Override
        public void lock() {
            QueuedFencedLock.this.lock(maxHoldNanos);
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            QueuedFencedLock.this.lockInterruptibly(maxHoldNanos);
        }

        @Override
        public boolean tryLock() {
            return QueuedFencedLock.this.tryLock(maxHoldNanos);
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return QueuedFencedLock.this.tryLock(time, unit, maxHoldNanos);
        }

        @Override
        public FencedLock withMaxHold(Duration maxHold) {
            return QueuedFencedLock.this.withMaxHold(maxHold);
        }

        @Override
        public void unlock() {
            QueuedFencedLock.this.unlock();
        }

        @Override
        public FencingToken token() {
            return QueuedFencedLock.this.token();
        }

        @Override
        public CompletionStage<Void> done() {
            return QueuedFencedLock.this.done();
        }

        @Override
        public Optional<LockLostException> err() {
            return QueuedFencedLock.this.err();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return QueuedFencedLock.this.isHeldByCurrentThread();
        }

        @Override
        public int getHoldCount() {
            return QueuedFencedLock.this.getHoldCount();
        }

        @Override
        public Condition newCondition() {
            return QueuedFencedLock.this.newCondition();
        }

        @Override
        public String toString() {
            return QueuedFencedLock.this + " with a maximum hold of " + TimeUnit.NANOSECONDS.toMillis(maxHoldNanos) + " ms";
        }
    }

    @Override
    public String toString() {
        return "FencedLock[" + description + (local.isLocked() ? ", held" : ", free") + "]";
    }
}
