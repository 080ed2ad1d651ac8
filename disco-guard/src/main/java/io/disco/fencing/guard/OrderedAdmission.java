package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.time.Duration;

/**
 * A {@link Guard}'s admission in token order ({@link Guard#admit}): every action admitted with a token
 * completes before any action admitted with a higher token starts; equal tokens run together. The
 * admissions of the running token are an {@link Epoch}; a higher token raises the {@link GuardMark}
 * (so lower ones are stale from then on) and waits, at most the drain timeout, for the running
 * epoch's count to reach zero, then starts its own.
 *
 * <p>Joining the running token takes no lock: the count goes in first and the mark is read after,
 * while a higher token raises the mark first and reads the count after, so one of the two sees the
 * other ({@link Epoch#leave} keeps the same order).
 */
final class OrderedAdmission {
    private final GuardMark mark;
    private final Duration drainTimeout;
    /**
     * The token whose admissions may run now, with their count. Every open admission has this
     * epoch's token: a higher token starts a new epoch only once this one's count is zero, and a
     * lower token is stale. Replaced under the mark's lock.
     */
    private volatile Epoch epoch;

    OrderedAdmission(GuardMark mark, Duration drainTimeout) {
        this.mark = mark;
        this.drainTimeout = drainTimeout;
        this.epoch = new Epoch(mark, 0);
    }

    Duration drainTimeout() {
        return drainTimeout;
    }

    /**
     * Admits {@code token} in token order; the caller owns one count of the returned epoch and leaves
     * it when the action completes.
     *
     * @return the epoch the admission joined
     */
    Epoch enter(FencingToken token) throws InterruptedException {
        long t = token.value();
        Epoch e = epoch;
        if (e.token == t) {
            // Joining the running token: count in first, then look at the mark. A higher token raises
            // the mark first and then looks at the count, so one of the two sees the other.
            e.running.incrementAndGet();
            long m = mark.value.get();
            if (m == t) {
                mark.events.accepted(token);
                return e;
            }
            e.leave();
            if (m > t) {
                throw mark.events.stale(token, m);
            }
            // m < t: the mark was lowered below the running token (lowerMark); it needs confirming again
        }
        return enterSlowly(token);
    }

    private Epoch enterSlowly(FencingToken token) throws InterruptedException {
        long t = token.value();
        if (t > mark.value.get()) {
            mark.confirm(token);
        }
        long deadline = System.nanoTime() + drainTimeout.toNanos();
        mark.lock.lockInterruptibly();
        try {
            mark.raiseLocked(token);
            while (true) {
                long m = mark.value.get();
                if (t < m) {
                    throw mark.events.stale(token, m);
                }
                Epoch e = epoch;
                if (e.token == t) {
                    e.running.incrementAndGet();
                    mark.events.accepted(token);
                    return e;
                }
                if (e.running.get() == 0) {
                    Epoch next = new Epoch(mark, t);
                    next.running.set(1);
                    epoch = next;
                    mark.events.accepted(token);
                    return next;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    mark.events.rejected(token, GuardListener.Rejection.DRAIN_TIMEOUT);
                    throw new DrainTimeoutException(token, drainTimeout);
                }
                mark.changed.awaitNanos(left);
            }
        } finally {
            mark.lock.unlock();
        }
    }
}
