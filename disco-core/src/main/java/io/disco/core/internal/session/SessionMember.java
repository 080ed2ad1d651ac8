package io.disco.core.internal.session;

/**
 * A service as its session knows it, in the session's {@link ServiceRegistry}: told when the session ends (lost,
 * on the session's thread: must not block; or closed, on the closing thread). Nothing else of a service is known
 * to the session.
 */
public interface SessionMember {

    /**
     * The session was lost (expired, silent for long enough that the server may have expired it, or ended from
     * outside).
     *
     * @param reason what happened, for the loss's message
     * @param cause the underlying failure, or null
     */
    void sessionLost(String reason, Throwable cause);

    /** The session is closing: release what is held, withdraw what is pending, finish. */
    void sessionClosed();
}
