package io.disco.micrometer;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The two observations of a disco client ({@link DiscoObservations}): an acquisition's wait and a grant's hold, their
 * default conventions and their key names.
 *
 * <table>
 *   <caption>Key values</caption>
 *   <tr><th>key</th><th>cardinality</th><th>values</th></tr>
 *   <tr><td>{@code disco.primitive}</td><td>low</td><td>{@code lock}, {@code rwlock.read}, {@code rwlock.write},
 *       {@code semaphore}, {@code election}</td></tr>
 *   <tr><td>{@code disco.outcome}</td><td>low</td><td>wait: {@code acquired}, {@code busy}, {@code timed_out},
 *       {@code interrupted}, {@code cancelled}, {@code failed}; hold: {@code released}, {@code lost}; {@code unknown}
 *       until it ends</td></tr>
 *   <tr><td>{@code disco.name}</td><td>high</td><td>the lock's (semaphore's, election's) name</td></tr>
 *   <tr><td>{@code disco.token}</td><td>high</td><td>the grant's fencing token: the hold's from its start, the
 *       wait's once granted</td></tr>
 *   <tr><td>{@code disco.key}</td><td>high</td><td>the grant's key in the backend</td></tr>
 *   <tr><td>{@code disco.slot}</td><td>high</td><td>a semaphore permit's slot (its token is the slot's)</td></tr>
 * </table>
 */
public enum DiscoObservationDocumentation implements ObservationDocumentation {

    /** An acquisition's wait, from the call to the grant or to its end without one. */
    WAIT {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultDiscoWaitObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeys.values();
        }
    },

    /** A hold, from the grant to its release or its loss. */
    HOLD {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultDiscoHoldObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeys.values();
        }
    };

    /** The low-cardinality keys: tags of the timers an observation's meter handler makes. */
    public enum LowCardinalityKeys implements KeyName {
        /** What is acquired or held. */
        PRIMITIVE {
            @Override
            public String asString() {
                return "disco.primitive";
            }
        },
        /** How the wait or the hold ended. */
        OUTCOME {
            @Override
            public String asString() {
                return "disco.outcome";
            }
        }
    }

    /** The high-cardinality keys: span tags, never meter tags. */
    public enum HighCardinalityKeys implements KeyName {
        /** The name of the lock, read/write lock, semaphore or election: unbounded, so high by default. */
        NAME {
            @Override
            public String asString() {
                return "disco.name";
            }
        },
        /** The grant's fencing token. */
        TOKEN {
            @Override
            public String asString() {
                return "disco.token";
            }

            @Override
            public boolean isRequired() {
                return false;
            }
        },
        /** The grant's key in the backend. */
        KEY {
            @Override
            public String asString() {
                return "disco.key";
            }

            @Override
            public boolean isRequired() {
                return false;
            }
        },
        /** A semaphore permit's slot. */
        SLOT {
            @Override
            public String asString() {
                return "disco.slot";
            }

            @Override
            public boolean isRequired() {
                return false;
            }
        }
    }
}
