package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.disco.fencing.Fenced;
import io.micrometer.observation.Observation;

/** One acquisition's wait as an {@link Observation}, started on the calling thread; its grant starts the hold's. */
final class ObservedAttempt implements AcquisitionObserver.Attempt {

    private final DiscoObservations observations;
    private final Observation observation;
    private final DiscoWaitContext context;

    ObservedAttempt(DiscoObservations observations, Observation observation, DiscoWaitContext context) {
        this.observations = observations;
        this.observation = observation;
        this.context = context;
    }

    /** Stops the wait, with the grant's token, and starts the hold, a sibling of the wait under the same parent. */
    @Override
    public AcquisitionObserver.Hold granted(Fenced grant) {
        context.grant(grant);
        context.outcome(AcquisitionObserver.Outcome.ACQUIRED);
        observation.stop();
        return observations.hold(context.kind(), context.primitiveName(), grant, context.getParentObservation());
    }

    @Override
    public void ended(AcquisitionObserver.Outcome outcome, Throwable cause) {
        context.outcome(outcome);
        if (outcome == AcquisitionObserver.Outcome.FAILED && cause != null) {
            observation.error(cause);
        }
        observation.stop();
    }

    @Override
    public String toString() {
        return "ObservedAttempt[" + observation + "]";
    }
}
