package io.disco.micrometer;

import io.micrometer.common.KeyValues;

/**
 * The default convention of the hold observation: named {@code disco.hold}, contextual name {@code <primitive> hold}
 * (for example {@code lock hold}); low-cardinality {@code disco.primitive} and {@code disco.outcome} (released, lost);
 * high-cardinality {@code disco.name}, {@code disco.token}, {@code disco.key} (and a permit's {@code disco.slot}).
 * Extend it to change one part (see {@link DefaultDiscoWaitObservationConvention}).
 */
public class DefaultDiscoHoldObservationConvention implements DiscoHoldObservationConvention {

    /** The one instance {@link DiscoObservations} uses. */
    public static final DefaultDiscoHoldObservationConvention INSTANCE = new DefaultDiscoHoldObservationConvention();

    /** For subclasses; use {@link #INSTANCE}. */
    protected DefaultDiscoHoldObservationConvention() {}

    /** @return {@code disco.hold} */
    @Override
    public String getName() {
        return "disco.hold";
    }

    /** @return {@code <primitive> hold}, for example {@code lock hold} */
    @Override
    public String getContextualName(DiscoHoldContext context) {
        return KeyValuesOf.primitive(context.kind()) + " hold";
    }

    /** @return {@code disco.primitive} and {@code disco.outcome} */
    @Override
    public KeyValues getLowCardinalityKeyValues(DiscoHoldContext context) {
        return KeyValues.of(KeyValuesOf.primitive(context), KeyValuesOf.outcome(context));
    }

    /** @return {@code disco.name}, {@code disco.token}, {@code disco.key} (a permit's {@code disco.slot}) */
    @Override
    public KeyValues getHighCardinalityKeyValues(DiscoHoldContext context) {
        return KeyValuesOf.nameAndGrant(context);
    }
}
