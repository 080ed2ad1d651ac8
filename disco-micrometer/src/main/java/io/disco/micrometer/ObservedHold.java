package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.micrometer.observation.Observation;

/** One hold as an {@link Observation}: started at the grant, stopped at its release or its loss (then an error). */
final class ObservedHold implements AcquisitionObserver.Hold {

    private final Observation observation;
    private final DiscoHoldContext context;

    ObservedHold(Observation observation, DiscoHoldContext context) {
        this.observation = observation;
        this.context = context;
    }

    @Override
    public void released() {
        context.end(DiscoHoldContext.End.RELEASED);
        observation.stop();
    }

    @Override
    public void lost(Throwable cause) {
        context.end(DiscoHoldContext.End.LOST);
        observation.error(cause);
        observation.stop();
    }

    @Override
    public String toString() {
        return "ObservedHold[" + observation + "]";
    }
}
