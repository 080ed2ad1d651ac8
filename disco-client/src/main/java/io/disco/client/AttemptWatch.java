package io.disco.client;

import io.disco.fencing.Fenced;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One acquisition as the client's {@link AcquisitionObserver}s see it ({@link AcquisitionObserver.Attempt}): told
 * once, whichever comes first, that it was {@linkplain #granted granted} or how it {@linkplain #ended ended}; later
 * calls do nothing, so that every path that may end an acquisition (its thread, the cancellation of its future) can
 * say so without counting on the others. {@link #OFF}, the watch of a client without observers, does nothing.
 */
final class AttemptWatch {

    /** The watch of every acquisition of a client without observers. */
    static final AttemptWatch OFF = new AttemptWatch(null);

    /** The observers' attempts (an entry null where its observer threw); null for {@link #OFF}. */
    private final AcquisitionObserver.Attempt[] attempts;

    private final AtomicBoolean over;

    AttemptWatch(AcquisitionObserver.Attempt[] attempts) {
        this.attempts = attempts;
        this.over = attempts == null ? null : new AtomicBoolean();
    }

    /**
     * The acquisition holds {@code grant}.
     *
     * @return the hold's watch; {@link HoldWatch#OFF} for {@link #OFF}, or if this acquisition was told already
     */
    HoldWatch granted(Fenced grant) {
        if (attempts == null || !over.compareAndSet(false, true)) {
            return HoldWatch.OFF;
        }
        AcquisitionObserver.Hold[] holds = new AcquisitionObserver.Hold[attempts.length];
        for (int i = 0; i < attempts.length; i++) {
            if (attempts[i] != null) {
                try {
                    holds[i] = attempts[i].granted(grant);
                } catch (RuntimeException e) {
                    Observers.threw(attempts[i], e);
                }
            }
        }
        return new HoldWatch(holds);
    }

    /** The acquisition ended without holding (never {@link AcquisitionObserver.Outcome#ACQUIRED}). */
    void ended(AcquisitionObserver.Outcome outcome, Throwable cause) {
        if (attempts == null || !over.compareAndSet(false, true)) {
            return;
        }
        for (AcquisitionObserver.Attempt a : attempts) {
            if (a != null) {
                try {
                    a.ended(outcome, cause);
                } catch (RuntimeException e) {
                    Observers.threw(a, e);
                }
            }
        }
    }

    /** The acquisition threw {@code cause} (interrupted, or failed): ended so. */
    void threw(Throwable cause) {
        ended(
                cause instanceof InterruptedException
                        ? AcquisitionObserver.Outcome.INTERRUPTED
                        : AcquisitionObserver.Outcome.FAILED,
                cause);
    }

    /** An asynchronous acquisition's future failed with {@code cause}: cancelled, or failed. */
    void failed(Throwable cause) {
        ended(
                cause instanceof CancellationException
                        ? AcquisitionObserver.Outcome.CANCELLED
                        : AcquisitionObserver.Outcome.FAILED,
                cause);
    }

    /**
     * A blocking acquisition returned {@code acquired}: when false it ended as {@code notAcquired} (when true its
     * grant has told it already, where the grant was recorded).
     *
     * @param notAcquired what a false return means: {@link AcquisitionObserver.Outcome#BUSY} for a try,
     *     {@link AcquisitionObserver.Outcome#TIMED_OUT} for a timed acquisition
     * @return {@code acquired}
     */
    boolean returned(boolean acquired, AcquisitionObserver.Outcome notAcquired) {
        if (!acquired) {
            ended(notAcquired, null);
        }
        return acquired;
    }
}
