package io.disco.semaphore;

import io.disco.fencing.DiscoException;

/**
 * The semaphore service's lease was lost (expired after a pause or partition, revoked, or the
 * backend unreachable for longer than its TTL), or the held permit's key was deleted: the permit,
 * if any, is gone, and the service is finished.
 */
public class SemaphoreLostException extends DiscoException {

    /**
     * @param message what was lost
     * @param cause the underlying failure, or null
     */
    public SemaphoreLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
