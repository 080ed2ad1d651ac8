package io.disco.election;

import io.disco.fencing.DiscoException;

/**
 * The lease behind an election service is gone (it expired, was revoked, or the candidate's own key
 * was deleted), so any leadership it held, and any campaign it was running, is lost. A pending
 * campaign fails with this exception; a leader learns it through {@link ElectionService#done()} and
 * {@link ElectionService#err()} and must stop acting as leader: its token is already, or will soon be,
 * rejected.
 */
public class LeadershipLostException extends DiscoException {

    /**
     * @param message what was lost and why
     * @param cause the underlying failure, or {@code null}
     */
    public LeadershipLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
