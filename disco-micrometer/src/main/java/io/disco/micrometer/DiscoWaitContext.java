package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import java.util.Optional;

/**
 * The context of the observation of one acquisition's wait ({@link DiscoObservationDocumentation#WAIT}): from the
 * call, on the calling thread, to the grant or the end without it. Its {@link #outcome()} and, once granted, its
 * grant are set as it ends.
 */
public final class DiscoWaitContext extends DiscoObservationContext {

    private volatile AcquisitionObserver.Outcome outcome;

    /**
     * @param kind what is acquired
     * @param name the name, as given to the client
     */
    public DiscoWaitContext(AcquisitionObserver.Kind kind, String name) {
        super(kind, name, null);
    }

    /** @return how the acquisition ended; empty while it waits */
    public Optional<AcquisitionObserver.Outcome> outcome() {
        return Optional.ofNullable(outcome);
    }

    void outcome(AcquisitionObserver.Outcome outcome) {
        this.outcome = outcome;
    }
}
