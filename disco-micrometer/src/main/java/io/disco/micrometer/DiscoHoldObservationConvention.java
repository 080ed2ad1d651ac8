package io.disco.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The convention of the hold observation ({@link DiscoObservationDocumentation#HOLD}): implement it (or extend
 * {@link DefaultDiscoHoldObservationConvention}) to change its name or key values, and give it to
 * {@link DiscoObservations#withHoldConvention}, or register it as a global convention on the registry.
 */
public interface DiscoHoldObservationConvention extends ObservationConvention<DiscoHoldContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof DiscoHoldContext;
    }
}
