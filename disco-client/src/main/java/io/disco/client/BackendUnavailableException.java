package io.disco.client;

import io.disco.fencing.DiscoException;

/**
 * An acquisition gave up because the client has had no owner in the backend (for etcd: no lease) for
 * longer than its owner wait: the backend cannot be reached, or refuses the client (the message names the
 * backend's endpoints and the last failure). Waiting for a holder is an acquisition's contract; waiting
 * for an unreachable backend is not, so {@code lock()}, {@code lockInterruptibly()}, a semaphore's
 * {@code acquire()} and every other acquisition throw this instead of waiting for ever. The client keeps
 * opening an owner in the background: a later acquisition succeeds once the backend answers again.
 *
 * <p>A request path maps it to "service unavailable" (HTTP 503); a timed acquisition such as
 * {@code tryLock(timeout)} whose own timeout ends first returns {@code false} as before.
 */
public class BackendUnavailableException extends DiscoException {

    /**
     * @param message which backend, since when, and why
     */
    public BackendUnavailableException(String message) {
        super(message);
    }
}
