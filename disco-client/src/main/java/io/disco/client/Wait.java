package io.disco.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * How an acquisition waits, locally and in the backend: the one place that turns the way of waiting of
 * {@code lock()}, {@code lockInterruptibly()}, {@code tryLock(time)} and {@code tryLock()} (and a semaphore's
 * {@code acquire} forms) into the call that waits so. Its duties: take a local lock ({@link #lock}), wait for a
 * pending service or owner ({@link #await}), make one claim in the backend in the matching form of a service's
 * acquire methods ({@link #claim}), and bound the grace a failed claim may wait to turn out a loss
 * ({@link #maxWait}). Every deadline is a {@code System.nanoTime()} value; {@link Long#MAX_VALUE} is none.
 */
enum Wait {
    /** {@code lock()}: as long as it takes, ignoring interruption (the interrupt status is kept). */
    UNINTERRUPTIBLY,
    /** {@code lockInterruptibly()} and {@code tryLock(time)}: until the deadline (if any), interruptibly. */
    INTERRUPTIBLY,
    /** {@code tryLock()}: only if free now. */
    NOT_AT_ALL;

    /** A service's blocking acquire method ({@code lock()}, {@code rLock()}, {@code acquire()}). */
    @FunctionalInterface
    interface Blocking<G> {
        /** @return the grant, once acquired */
        G acquire() throws InterruptedException;
    }

    /** A service's timed acquire method ({@code lock(timeout)}, {@code rLock(timeout)}, {@code acquire(timeout)}). */
    @FunctionalInterface
    interface Timed<G> {
        /** @return the grant, if acquired within {@code timeout} */
        G acquire(Duration timeout) throws InterruptedException, TimeoutException;
    }

    /** @return the longest wait for a failed claim's grace of an acquisition that waits this way until {@code deadline} */
    long maxWait(long deadline) {
        return switch (this) {
            case NOT_AT_ALL -> 0;
            case UNINTERRUPTIBLY -> Long.MAX_VALUE;
            case INTERRUPTIBLY -> deadline == Long.MAX_VALUE ? Long.MAX_VALUE : deadline - System.nanoTime();
        };
    }

    /**
     * Takes a local lock this way.
     *
     * @return whether it was taken (false: not free now, or not within the deadline)
     */
    boolean lock(Lock lock, long deadline) throws InterruptedException {
        switch (this) {
            case UNINTERRUPTIBLY -> {
                lock.lock();
                return true;
            }
            case NOT_AT_ALL -> {
                return lock.tryLock();
            }
            default -> {
                if (deadline == Long.MAX_VALUE) {
                    lock.lockInterruptibly();
                    return true;
                }
                return lock.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * Waits this way for {@code pending} (the service or the owner to claim through): a failure is thrown as
     * its cause (for the client's owner, {@link BackendUnavailableException} once the owner wait has passed).
     *
     * @throws TimeoutException if not done in time ({@link #NOT_AT_ALL}: not done now)
     */
    <T> T await(CompletableFuture<T> pending, long deadline) throws InterruptedException, TimeoutException {
        try {
            if (pending.isDone() || this == UNINTERRUPTIBLY) {
                return pending.join();
            }
            if (this == NOT_AT_ALL) {
                throw new TimeoutException(
                        "nothing to claim through right now (the client has no owner in the backend)");
            }
            if (deadline == Long.MAX_VALUE) {
                return pending.get();
            }
            return pending.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (CompletionException | ExecutionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
        } catch (CancellationException e) {
            throw new IllegalStateException("nothing to claim through: " + e.getMessage(), e);
        }
    }

    /**
     * One claim in the backend, through the form of a service's acquire methods that waits this way: the
     * asynchronous one, joined ({@link #UNINTERRUPTIBLY}: it keeps the claim's place in the queue whatever
     * interrupts), the try ({@link #NOT_AT_ALL}), the blocking or the timed one ({@link #INTERRUPTIBLY}).
     *
     * @return the grant, or null if {@link #NOT_AT_ALL} found it taken
     * @throws TimeoutException if the deadline has passed, or passes while the claim waits (withdrawn)
     */
    <G> G claim(
            long deadline,
            Supplier<Optional<G>> now,
            Blocking<G> blocking,
            Timed<G> timed,
            Supplier<CompletableFuture<G>> async)
            throws InterruptedException, TimeoutException {
        switch (this) {
            case UNINTERRUPTIBLY -> {
                try {
                    return async.get().join();
                } catch (CompletionException e) {
                    throw e.getCause() instanceof RuntimeException cause ? cause : e;
                }
            }
            case NOT_AT_ALL -> {
                return now.get().orElse(null);
            }
            default -> {
                if (deadline == Long.MAX_VALUE) {
                    return blocking.acquire();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("not acquired within the timeout");
                }
                return timed.acquire(Duration.ofNanos(left));
            }
        }
    }
}
