package io.disco.lock;

import io.disco.fencing.DiscoException;

/**
 * The lease behind a lock service is gone (it expired, was revoked, or its own key was deleted), so
 * any lock it held or was waiting for is lost. A waiting acquisition fails with this exception; a
 * holder learns it through {@link LockService#done()} and {@link LockService#err()} and must stop
 * using the resource: its token is already, or will soon be, rejected.
 */
public class LockLostException extends DiscoException {

    /**
     * @param message what was lost and why
     * @param cause the underlying failure, or {@code null}
     */
    public LockLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
