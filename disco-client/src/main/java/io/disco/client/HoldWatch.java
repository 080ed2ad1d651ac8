package io.disco.client;

import io.disco.fencing.DiscoService;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One hold as the client's {@link AcquisitionObserver}s see it ({@link AcquisitionObserver.Hold}): told once,
 * whichever comes first, that it was {@linkplain #released released} or {@linkplain #lost lost}; later calls do
 * nothing. A hold may end on two threads at once (its holder's release, and the loss its service reports on the
 * backend's callback executor): the first one tells. {@link #OFF}, the watch of a client without observers, does
 * nothing.
 */
final class HoldWatch {

    /** The watch of every hold of a client without observers, and of a hold told already. */
    static final HoldWatch OFF = new HoldWatch(null);

    /** The observers' holds (an entry null where its observer threw); null for {@link #OFF}. */
    private final AcquisitionObserver.Hold[] holds;

    private final AtomicBoolean over;

    HoldWatch(AcquisitionObserver.Hold[] holds) {
        this.holds = holds;
        this.over = holds == null ? null : new AtomicBoolean();
    }

    /** @return whether anybody observes this hold: callers register what only an observer needs only then */
    boolean isOn() {
        return holds != null;
    }

    /** The holder released it. */
    void released() {
        if (holds == null || !over.compareAndSet(false, true)) {
            return;
        }
        for (AcquisitionObserver.Hold h : holds) {
            if (h != null) {
                try {
                    h.released();
                } catch (RuntimeException e) {
                    Observers.threw(h, e);
                }
            }
        }
    }

    /** It was lost, or its release did not complete. */
    void lost(Throwable cause) {
        if (holds == null || !over.compareAndSet(false, true)) {
            return;
        }
        for (AcquisitionObserver.Hold h : holds) {
            if (h != null) {
                try {
                    h.lost(cause);
                } catch (RuntimeException e) {
                    Observers.threw(h, e);
                }
            }
        }
    }

    /** It ended with its service: lost if the service reports a loss, released otherwise (the service was closed). */
    void endedWith(Optional<? extends Throwable> loss) {
        if (loss.isPresent()) {
            lost(loss.get());
        } else {
            released();
        }
    }

    /**
     * Ends this hold when {@code ended} completes, unless its holder's release told it first: lost if
     * {@code service} reports a loss then, released otherwise. {@code ended} completes on the backend's callback
     * executor when the service reports the loss (or at once, on the thread that registers this, if it has
     * already): never on a thread that keeps the owner alive. Registers nothing for {@link #OFF}.
     */
    void endsWith(CompletionStage<?> ended, DiscoService<?, ?> service) {
        if (holds != null) {
            ended.thenRun(() -> endedWith(service.err()));
        }
    }
}
