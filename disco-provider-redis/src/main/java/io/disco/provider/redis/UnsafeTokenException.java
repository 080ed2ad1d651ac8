package io.disco.provider.redis;

import io.disco.fencing.DiscoException;

/**
 * An acquisition that Redis could not grant with a token that is safe to fence with, so it was not granted (the
 * backend fails closed): the grant's write did not reach the replicas it must reach in time
 * ({@link RedisOptions.Builder#replicaAcks}), the epoch of the primary could not be established (no majority of
 * sentinels naming it), the token record is exhausted, or the server's persistence cannot keep tokens across a
 * restart. The message names the cause and, where there is one, the setting to change. A token assigned and then
 * refused this way is consumed: never handed out, never issued again.
 */
public class UnsafeTokenException extends DiscoException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message the cause, and the setting to change if any
     */
    public UnsafeTokenException(String message) {
        super(message);
    }

    /**
     * @param message the cause, and the setting to change if any
     * @param cause the underlying failure
     */
    public UnsafeTokenException(String message, Throwable cause) {
        super(message, cause);
    }
}
