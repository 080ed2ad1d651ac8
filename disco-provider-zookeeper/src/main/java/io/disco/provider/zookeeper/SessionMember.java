package io.disco.provider.zookeeper;

/** A service on a {@link ZooKeeperSession}: told, on the session's thread, when the session ends. Must not block. */
interface SessionMember {

    /**
     * The session was lost (expired, or silent for long enough that the server may have expired it).
     *
     * @param reason what happened, for the loss's message
     * @param cause the underlying failure, or null
     */
    void sessionLost(String reason, Throwable cause);

    /** The session is closing: release what is held, withdraw what is pending, finish. */
    void sessionClosed();
}
