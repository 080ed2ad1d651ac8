package io.disco.rwlock;

import io.disco.fencing.DiscoException;

/**
 * The lease behind a read/write lock service is gone (it expired, was revoked, or its own key was
 * deleted), so any read or write grant it held or was waiting for is lost. A waiting acquisition
 * fails with this exception; a holder learns it through {@link RWLockService#done()} and
 * {@link RWLockService#err()} and must stop using the resource: its token is already, or will soon
 * be, rejected.
 */
public class RWLockLostException extends DiscoException {

    /**
     * @param message what was lost and why
     * @param cause the underlying failure, or {@code null}
     */
    public RWLockLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
