package io.disco.core;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import java.time.Duration;

/**
 * What a session and its services tell about themselves: renewals, their failures, the loss of the
 * lease, and each service's acquisitions and releases. The same for every provider: registered with
 * the provider's options (etcd: {@code EtcdOptions.builder().listener(...)}); the Micrometer binding
 * ({@code disco-micrometer}) is one.
 *
 * <p>Calls are made one at a time and in the order of the events, per session, on the session's
 * callback executor, never on a thread that renews the lease or detects its loss: a slow listener
 * delays only later notifications, and one that throws is logged and called again for later events.
 * Every method has an empty default.
 */
public interface SessionListener {

    /**
     * A renewal was answered.
     *
     * @param session the session
     * @param remaining how long the lease is valid from now on the local clock
     */
    default void renewed(DiscoSession session, Duration remaining) {}

    /**
     * A renewal failed (the member did not answer, the stream broke, no leader); renewals go on.
     *
     * @param session the session
     * @param failingFor since the last answered renewal
     * @param remaining how long the lease stays valid unless a renewal is answered
     * @param cause the failure
     */
    default void renewalFailing(DiscoSession session, Duration failingFor, Duration remaining, Throwable cause) {}

    /**
     * The lease is lost: every service of the session is finished. No renewal or service event follows,
     * only {@link #closed} if the owner closes the session afterwards; the services' {@code grantLost}
     * calls come before it.
     *
     * @param session the session
     * @param cause why
     */
    default void lost(DiscoSession session, DiscoException cause) {}

    /**
     * The session was closed by its owner (also after it was lost): the last call for the session.
     *
     * @param session the session
     */
    default void closed(DiscoSession session) {}

    /**
     * A service acquired its grant.
     *
     * @param session the session
     * @param primitive {@code lock}, {@code rwlock}, {@code election} or {@code semaphore}
     * @param name the service's name
     * @param key the grant's key
     * @param token the grant's fencing token
     * @param waited from the start of the acquisition to the grant
     */
    default void acquired(
            DiscoSession session, String primitive, String name, String key, FencingToken token, Duration waited) {}

    /**
     * A service released its grant (release, resign, close).
     *
     * @param session the session
     * @param primitive the service's primitive
     * @param name the service's name
     * @param held from the grant to the release
     */
    default void released(DiscoSession session, String primitive, String name, Duration held) {}

    /**
     * An acquisition ended without a grant: timed out, interrupted, cancelled, failed, or its lease lost.
     * A try-acquisition that found the grant taken is not a failure and is not reported.
     *
     * @param session the session
     * @param primitive the service's primitive
     * @param name the service's name
     * @param cause why
     * @param waited from the start of the acquisition to its end
     */
    default void acquisitionFailed(
            DiscoSession session, String primitive, String name, Throwable cause, Duration waited) {}

    /**
     * A held grant was lost: its key deleted by somebody else, or the lease lost while it was held.
     *
     * @param session the session
     * @param primitive the service's primitive
     * @param name the service's name
     * @param cause the loss
     * @param held from the grant to the loss
     */
    default void grantLost(DiscoSession session, String primitive, String name, Throwable cause, Duration held) {}
}
