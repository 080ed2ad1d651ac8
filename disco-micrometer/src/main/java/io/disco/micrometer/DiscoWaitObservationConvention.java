package io.disco.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of the wait observation ({@link DiscoObservationDocumentation#WAIT}): implement it (or extend
 * {@link DefaultDiscoWaitObservationConvention}) to change its name or key values, and give it to
 * {@link DiscoObservations#withWaitConvention}, or register it as a global convention on the registry.
 */
public interface DiscoWaitObservationConvention extends ObservationConvention<DiscoWaitContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof DiscoWaitContext;
    }
}
