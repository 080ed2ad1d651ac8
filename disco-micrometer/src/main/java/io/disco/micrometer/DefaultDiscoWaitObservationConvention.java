package io.disco.micrometer;

import io.micrometer.common.KeyValues;

/**
 * The default convention of the wait observation: named {@code disco.wait}, contextual name {@code <primitive> wait}
 * (for example {@code lock wait}); low-cardinality {@code disco.primitive} and {@code disco.outcome}; high-cardinality
 * {@code disco.name} and, once granted, {@code disco.token}, {@code disco.key} (and a permit's {@code disco.slot}).
 * Extend it to change one part, for example to make the name a low-cardinality key (a meter tag too) where an
 * application's names are few:
 *
 * <pre>{@code
 * class NamedWaits extends DefaultDiscoWaitObservationConvention {
 *     @Override
 *     public KeyValues getLowCardinalityKeyValues(DiscoWaitContext context) {
 *         return super.getLowCardinalityKeyValues(context).and("disco.name", context.primitiveName());
 *     }
 * }
 * DiscoObservations.of(registry).withWaitConvention(new NamedWaits());
 * }</pre>
 */
public class DefaultDiscoWaitObservationConvention implements DiscoWaitObservationConvention {

    /** The one instance {@link DiscoObservations} uses. */
    public static final DefaultDiscoWaitObservationConvention INSTANCE = new DefaultDiscoWaitObservationConvention();

    /** For subclasses; use {@link #INSTANCE}. */
    protected DefaultDiscoWaitObservationConvention() {}

    /** @return {@code disco.wait} */
    @Override
    public String getName() {
        return "disco.wait";
    }

    /** @return {@code <primitive> wait}, for example {@code lock wait} */
    @Override
    public String getContextualName(DiscoWaitContext context) {
        return KeyValuesOf.primitive(context.kind()) + " wait";
    }

    /** @return {@code disco.primitive} and {@code disco.outcome} */
    @Override
    public KeyValues getLowCardinalityKeyValues(DiscoWaitContext context) {
        return KeyValues.of(KeyValuesOf.primitive(context), KeyValuesOf.outcome(context));
    }

    /** @return {@code disco.name} and, once granted, {@code disco.token}, {@code disco.key} (a permit's {@code disco.slot}) */
    @Override
    public KeyValues getHighCardinalityKeyValues(DiscoWaitContext context) {
        return KeyValuesOf.nameAndGrant(context);
    }
}
