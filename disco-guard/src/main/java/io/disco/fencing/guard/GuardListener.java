package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;

/**
 * Told of every decision of a {@link Guard} (or of every key's guard of a {@link KeyedGuard}), on the
 * request's own thread: keep it cheap and non-blocking (a counter increment). Registered with
 * {@link Guard.Builder#listener}; the Micrometer binding ({@code disco-micrometer}) is one. A guard
 * without a listener pays one null check per decision.
 */
public interface GuardListener {

    /** Why a request was turned away. */
    enum Rejection {
        /** No, several, or a malformed token (HTTP 400, gRPC INVALID_ARGUMENT). */
        MALFORMED,
        /** A token lower than the mark (HTTP 409, gRPC ABORTED). */
        STALE,
        /** Older requests still ran after the drain timeout (HTTP 503, gRPC UNAVAILABLE). */
        DRAIN_TIMEOUT,
        /** The store could not persist a higher mark (HTTP 503, gRPC UNAVAILABLE). */
        STORE_FAILED,
        /** A token above the coordination service's revision: nobody issued it (HTTP 400, gRPC INVALID_ARGUMENT). */
        NOT_ISSUED,
        /** A token above the confirmed bound that the coordination service could not confirm in time (HTTP 503, gRPC UNAVAILABLE). */
        BOUND_UNAVAILABLE
    }

    /**
     * A token was accepted (by a check or an admission).
     *
     * @param key the guard's key ({@code ""} for a single guard)
     * @param token the accepted token, now at most the mark
     */
    default void accepted(String key, FencingToken token) {}

    /**
     * A request was rejected.
     *
     * @param key the guard's key ({@code ""} for a single guard), or null when the request named none
     * @param token the rejected token, or null when it was malformed
     * @param why the reason
     */
    default void rejected(String key, FencingToken token, Rejection why) {}
}
