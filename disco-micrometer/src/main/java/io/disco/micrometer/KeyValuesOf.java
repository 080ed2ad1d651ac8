package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.disco.election.Leadership;
import io.disco.fencing.Fenced;
import io.disco.lock.Grant;
import io.disco.micrometer.DiscoObservationDocumentation.HighCardinalityKeys;
import io.disco.micrometer.DiscoObservationDocumentation.LowCardinalityKeys;
import io.disco.rwlock.RWGrant;
import io.disco.semaphore.Permit;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import java.util.Locale;

/** The key values the two default conventions share: of the primitive, and of the name and the grant. */
final class KeyValuesOf {

    private static final KeyValue[] PRIMITIVES = primitives();
    private static final KeyValue[] WAIT_OUTCOMES = waitOutcomes();
    private static final KeyValue UNKNOWN = LowCardinalityKeys.OUTCOME.withValue("unknown");
    private static final KeyValue RELEASED = LowCardinalityKeys.OUTCOME.withValue("released");
    private static final KeyValue LOST = LowCardinalityKeys.OUTCOME.withValue("lost");

    private KeyValuesOf() {}

    private static KeyValue[] primitives() {
        AcquisitionObserver.Kind[] kinds = AcquisitionObserver.Kind.values();
        KeyValue[] out = new KeyValue[kinds.length];
        for (AcquisitionObserver.Kind k : kinds) {
            out[k.ordinal()] = LowCardinalityKeys.PRIMITIVE.withValue(primitive(k));
        }
        return out;
    }

    private static KeyValue[] waitOutcomes() {
        AcquisitionObserver.Outcome[] outcomes = AcquisitionObserver.Outcome.values();
        KeyValue[] out = new KeyValue[outcomes.length];
        for (AcquisitionObserver.Outcome o : outcomes) {
            out[o.ordinal()] = LowCardinalityKeys.OUTCOME.withValue(o.name().toLowerCase(Locale.ROOT));
        }
        return out;
    }

    /** @return the value of {@code disco.primitive} for {@code kind}: lock, rwlock.read, rwlock.write, semaphore, election */
    static String primitive(AcquisitionObserver.Kind kind) {
        return switch (kind) {
            case LOCK -> "lock";
            case READ_LOCK -> "rwlock.read";
            case WRITE_LOCK -> "rwlock.write";
            case SEMAPHORE -> "semaphore";
            case ELECTION -> "election";
        };
    }

    /** @return {@code disco.primitive} of {@code context} */
    static KeyValue primitive(DiscoObservationContext context) {
        return PRIMITIVES[context.kind().ordinal()];
    }

    /** @return {@code disco.outcome} of a wait: how it ended, or unknown while it waits */
    static KeyValue outcome(DiscoWaitContext context) {
        return context.outcome().map(o -> WAIT_OUTCOMES[o.ordinal()]).orElse(UNKNOWN);
    }

    /** @return {@code disco.outcome} of a hold: released, lost, or unknown while it lasts */
    static KeyValue outcome(DiscoHoldContext context) {
        return context.end()
                .map(e -> e == DiscoHoldContext.End.RELEASED ? RELEASED : LOST)
                .orElse(UNKNOWN);
    }

    /** @return the name, and the grant's token, key and (a permit's) slot once there is one */
    static KeyValues nameAndGrant(DiscoObservationContext context) {
        KeyValues out = KeyValues.of(HighCardinalityKeys.NAME.withValue(context.primitiveName()));
        Fenced grant = context.grant().orElse(null);
        if (grant == null) {
            return out;
        }
        out = out.and(HighCardinalityKeys.TOKEN.withValue(grant.token().toString()));
        String key = key(grant);
        if (key != null) {
            out = out.and(HighCardinalityKeys.KEY.withValue(key));
        }
        if (grant instanceof Permit p) {
            out = out.and(HighCardinalityKeys.SLOT.withValue(Integer.toString(p.slot())));
        }
        return out;
    }

    /** @return the grant's key in the backend, or null for a grant of another type */
    private static String key(Fenced grant) {
        if (grant instanceof Grant g) {
            return g.key();
        }
        if (grant instanceof RWGrant g) {
            return g.key();
        }
        if (grant instanceof Permit p) {
            return p.key();
        }
        if (grant instanceof Leadership l) {
            return l.key();
        }
        return null;
    }
}
