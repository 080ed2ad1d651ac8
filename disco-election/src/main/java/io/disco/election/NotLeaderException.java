package io.disco.election;

import io.disco.fencing.DiscoException;

/**
 * An operation that only the leader may perform ({@link ElectionService#proclaim(String)}) was called
 * by a service that is not the leader: it never won, already resigned, or its term ended (its key is
 * gone from the backend).
 */
public class NotLeaderException extends DiscoException {

    /**
     * @param message why this service is not the leader
     */
    public NotLeaderException(String message) {
        super(message);
    }
}
