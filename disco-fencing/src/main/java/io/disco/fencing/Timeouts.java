package io.disco.fencing;

import java.time.Duration;
import java.util.Objects;

/**
 * The one rule of every timeout that bounds a wait for other owners in this library, on every primitive
 * ({@code hold(timeout)}, {@code lock(timeout)}, {@code rLock(timeout)}, {@code acquire(timeout)},
 * {@code campaign(value, timeout)}, {@code tryLock(time, unit)}, a runner's {@code close(timeout)}), for the
 * per-owner services and the client's handles alike, on every backend. It is {@code java.util.concurrent}'s:
 *
 * <ul>
 *   <li><b>Zero or negative</b> means "only if free now": one try, as {@code tryLock()} makes it (one answer of
 *       the backend, bounded by its request timeout), and no wait for anybody; if another owner is in the way
 *       the acquisition gives up (a {@link java.util.concurrent.TimeoutException}, or {@code false} from
 *       {@code tryLock(time, unit)}) and leaves nothing claimed. As {@code ReentrantLock.tryLock(0, unit)}
 *       and {@code Semaphore.tryAcquire(0, unit)} do.</li>
 *   <li><b>Longer than a {@code long} of nanoseconds counts</b> (about 292 years, up to
 *       {@code ChronoUnit.FOREVER}) means no limit: the wait saturates, it never overflows into an
 *       {@link ArithmeticException} or into a deadline in the past.</li>
 *   <li><b>Null</b> is a {@link NullPointerException}: to wait without a limit, call the method without a
 *       timeout.</li>
 * </ul>
 *
 * Interruptible acquisitions ({@code lockInterruptibly()}, {@code acquire()}, every one with a timeout, zero
 * included) check the thread's interrupt status on entry, as {@code java.util.concurrent} does: an interrupted
 * thread gets an {@link InterruptedException} (its status cleared) and nothing is claimed or recorded.
 *
 * <p>What is not a wait for others is not covered: a lease's TTL, a request timeout and a maximum hold time
 * ({@code withMaxHold}) must be positive. Applications do not need this class; another backend's services use
 * it to keep the rule.
 */
public final class Timeouts {

    private Timeouts() {}

    /**
     * @param timeout a wait's timeout
     * @return whether it asks for one try only: zero or negative
     * @throws NullPointerException if {@code timeout} is null
     */
    public static boolean tryOnly(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return timeout.isZero() || timeout.isNegative();
    }

    /**
     * @param timeout a wait's timeout
     * @return {@code timeout} in nanoseconds, saturated: 0 for zero or negative, {@link Long#MAX_VALUE} for
     *     anything at least that long (a wait without a limit)
     * @throws NullPointerException if {@code timeout} is null
     */
    public static long nanos(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            return 0;
        }
        try {
            return timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * @param timeout a wait's timeout
     * @return whether it is too long to count in nanoseconds ({@link #nanos} is {@link Long#MAX_VALUE}): no limit
     * @throws NullPointerException if {@code timeout} is null
     */
    public static boolean unlimited(Duration timeout) {
        return nanos(timeout) == Long.MAX_VALUE;
    }

    /**
     * @param timeout a wait's timeout
     * @return the timeout for a message: {@code "500 ms"}, {@code "no time (one try)"}, {@code "no limit"}
     * @throws NullPointerException if {@code timeout} is null
     */
    public static String describe(Duration timeout) {
        long nanos = nanos(timeout);
        if (nanos == 0) {
            return "no time (" + timeout + ": one try, at once)";
        }
        if (nanos == Long.MAX_VALUE) {
            return "no limit";
        }
        return nanos >= 1_000_000 ? nanos / 1_000_000 + " ms" : nanos + " ns";
    }
}
