package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.disco.fencing.Fenced;
import java.util.Objects;
import java.util.Optional;

/**
 * The context of the observation of one hold ({@link DiscoObservationDocumentation#HOLD}): from the grant to its
 * release or its loss, with the grant (and so its fencing token) from the start. A loss is also the observation's
 * error.
 */
public final class DiscoHoldContext extends DiscoObservationContext {

    /** How a hold ended. */
    public enum End {
        /** Its holder released it. */
        RELEASED,
        /**
         * It ended without its holder's release (its owner lost, its key deleted, its maximum hold time passed), or
         * its release did not complete.
         */
        LOST
    }

    private volatile End end;

    /**
     * @param kind what is held
     * @param name the name, as given to the client
     * @param grant the grant
     */
    public DiscoHoldContext(AcquisitionObserver.Kind kind, String name, Fenced grant) {
        super(kind, name, Objects.requireNonNull(grant, "grant"));
    }

    /** @return how the hold ended; empty while it lasts */
    public Optional<End> end() {
        return Optional.ofNullable(end);
    }

    void end(End end) {
        this.end = end;
    }
}
