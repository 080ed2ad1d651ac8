package io.disco.client;

import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The thread-owned {@link FencedLock}: a fair local lock in front of one distributed claim at a time, made
 * by the local holder through the {@link LockService} its supplier gives at the moment of the claim (for the
 * client's locks, the name's service on the owner of the moment; for {@link FencedLocks#of}, always the one
 * service), with {@link SelfHealingClaim}. Its duties: the local queue and reentrancy, the claim on the first
 * hold and the release on the last ({@link HeldClaim}), the token, end and loss of the current hold, the
 * maximum hold time's views ({@link #withMaxHold}), and asynchronous holds ({@link AsyncAcquisition}).
 */
final class QueuedFencedLock implements FencedLock {

    private final String description;
    /** How the local holder claims: through the service of the moment, again after a loss. */
    private final SelfHealingClaim.Target<LockService, Grant> claims;

    private final ReentrantLock local = new ReentrantLock(true);
    /** The current hold; written by the holder (published by {@code local}), read by {@link #watch}'s callback. */
    private volatile HeldClaim held;
    /** The service whose end ends the hold made through it: watched once per service, not once per hold. */
    private LockService watched;

    /**
     * @param services the service to claim through; its stage completes once there is one (for example when a
     *     lost owner has been replaced); called by the local holder only
     * @param description what {@link Object#toString()} and the messages name
     */
    QueuedFencedLock(Supplier<? extends CompletionStage<LockService>> services, String description) {
        this.description = description;
        this.claims = SelfHealingClaim.throughServices(
                () -> services.get().toCompletableFuture(),
                LockLostException.class,
                (service, wait, deadline) ->
                        wait.claim(deadline, service::tryLock, service::lock, service::lock, service::lockAsync));
    }

    /** Acquires, ignoring interruption (the interrupt status is kept). */
    @Override
    public void lock() {
        lock(0, AttemptWatch.OFF);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInterruptibly(0, AttemptWatch.OFF);
    }

    @Override
    public boolean tryLock() {
        return tryLock(0, AttemptWatch.OFF);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(time, unit, 0, AttemptWatch.OFF);
    }

    /**
     * @throws IllegalArgumentException if {@code maxHold} is not positive
     */
    @Override
    public FencedLock withMaxHold(Duration maxHold) {
        long nanos = MaxHold.nanos(maxHold);
        return new MaxHoldView(nanos);
    }

    @Override
    public CompletableFuture<Held<FencedHold>> lockAsync() {
        return AsyncAcquisition.start(this, AttemptWatch.OFF, this::lockInterruptibly);
    }

    // The four acquisitions, for this lock's own methods and its maximum hold time's views (without a watch) and
    // for the client's lock handles (ClientLock), which start the watch of a first hold and end it when it is not
    // granted; the claim tells it the grant. maxHoldNanos: the maximum hold time of a first hold, 0 for none.

    void lock(long maxHoldNanos, AttemptWatch watch) {
        local.lock();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            claim(Wait.UNINTERRUPTIBLY, 0, maxHoldNanos, watch);
        } catch (InterruptedException | TimeoutException e) {
            local.unlock();
            throw new AssertionError("an uninterruptible, unbounded wait ended with " + e, e);
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    void lockInterruptibly(long maxHoldNanos, AttemptWatch watch) throws InterruptedException {
        local.lockInterruptibly();
        if (local.getHoldCount() > 1) {
            return;
        }
        try {
            claim(Wait.INTERRUPTIBLY, Long.MAX_VALUE, maxHoldNanos, watch);
        } catch (TimeoutException e) {
            local.unlock();
            throw new AssertionError("an unbounded wait timed out", e);
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /** Acquires only if both the local and the distributed lock are free right now; one round trip to the backend. */
    boolean tryLock(long maxHoldNanos, AttemptWatch watch) {
        if (!local.tryLock()) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return stillValid();
        }
        try {
            if (claim(Wait.NOT_AT_ALL, 0, maxHoldNanos, watch)) {
                return true;
            }
        } catch (TimeoutException e) {
            // nothing to claim through right now (the client has no owner): not free now
        } catch (InterruptedException e) {
            local.unlock();
            throw new AssertionError("tryLock() does not wait", e);
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
        local.unlock();
        return false;
    }

    boolean tryLock(long time, TimeUnit unit, long maxHoldNanos, AttemptWatch watch) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(time);
        if (!local.tryLock(time, unit)) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return stillValid();
        }
        try {
            if (claim(
                    deadline - System.nanoTime() <= 0 ? Wait.NOT_AT_ALL : Wait.INTERRUPTIBLY,
                    deadline,
                    maxHoldNanos,
                    watch)) {
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
     * Makes the distributed claim for the local holder, with {@link SelfHealingClaim}: a claim lost while
     * waiting held nothing, and is made again through the service the supplier gives then, unless that
     * service is finished (its own loss is then thrown). The grant is told to {@code watch}, whose hold
     * ends with the {@link HeldClaim}.
     *
     * @return whether the lock was acquired (false only for {@link Wait#NOT_AT_ALL})
     */
    private boolean claim(Wait wait, long deadline, long maxHoldNanos, AttemptWatch watch)
            throws InterruptedException, TimeoutException {
        SelfHealingClaim.Granted<LockService, Grant> g = SelfHealingClaim.claim(claims, wait, deadline);
        if (g == null) {
            return false;
        }
        held = new HeldClaim(g.unit(), g.grant(), description, maxHoldNanos, watch.granted(g.grant()));
        watch(g.unit());
        return true;
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
            throw new LockLostException(
                    "the hold of " + description + " by this thread was lost: "
                            + loss.get().getMessage(),
                    loss.get());
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

    /** This lock, whose first holds through the view end after a maximum hold time ({@link #withMaxHold}). */
    private final class MaxHoldView implements FencedLock {

        private final long maxHoldNanos;

        MaxHoldView(long maxHoldNanos) {
            this.maxHoldNanos = maxHoldNanos;
        }

        @Override
        public void lock() {
            QueuedFencedLock.this.lock(maxHoldNanos, AttemptWatch.OFF);
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            QueuedFencedLock.this.lockInterruptibly(maxHoldNanos, AttemptWatch.OFF);
        }

        @Override
        public boolean tryLock() {
            return QueuedFencedLock.this.tryLock(maxHoldNanos, AttemptWatch.OFF);
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return QueuedFencedLock.this.tryLock(time, unit, maxHoldNanos, AttemptWatch.OFF);
        }

        @Override
        public FencedLock withMaxHold(Duration maxHold) {
            return QueuedFencedLock.this.withMaxHold(maxHold);
        }

        @Override
        public CompletableFuture<Held<FencedHold>> lockAsync() {
            // its thread acquires through this view: the maximum hold time holds
            return AsyncAcquisition.start(this, AttemptWatch.OFF, this::lockInterruptibly);
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
        public String toString() {
            return QueuedFencedLock.this + " with a maximum hold of " + TimeUnit.NANOSECONDS.toMillis(maxHoldNanos)
                    + " ms";
        }
    }

    @Override
    public String toString() {
        return "FencedLock[" + description + (local.isLocked() ? ", held" : ", free") + "]";
    }
}
