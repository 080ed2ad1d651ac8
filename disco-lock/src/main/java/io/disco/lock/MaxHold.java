package io.disco.lock;

import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Objects;

/** The check of a maximum hold time ({@link FencedLock#withMaxHold}). */
final class MaxHold {

    private MaxHold() {
    }

    /**
     * @return {@code maxHold} in nanoseconds, saturated: one too long to count is {@link Long#MAX_VALUE} (no limit
     *     in practice), never an overflow
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    static long nanos(Duration maxHold) {
        Objects.requireNonNull(maxHold, "maxHold");
        if (maxHold.isZero() || maxHold.isNegative()) {
            throw new IllegalArgumentException("maxHold must be positive, got " + maxHold);
        }
        return Timeouts.nanos(maxHold);
    }
}
