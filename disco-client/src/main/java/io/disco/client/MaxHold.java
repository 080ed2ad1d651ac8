package io.disco.client;

import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Objects;

/** The check of a maximum hold time ({@link io.disco.lock.FencedLock#withMaxHold}), for every lock of the client. */
final class MaxHold {

    private MaxHold() {}

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
