package io.disco.provider.etcd;

import static io.disco.provider.etcd.GrantedLease.hex;

import io.disco.fencing.DiscoException;
import java.util.concurrent.TimeUnit;

/**
 * Why a session's lease is lost, in words: the causes {@link LeaseKeeper} marks a loss with, one per way a
 * lease ends without its session's close. Each says which lease and, where it helps, what to look at: its
 * validity ran out here, etcd no longer knows it (expired there or revoked), the application closed the jetcd
 * client, or the session gave it up because a key on it could not be withdrawn.
 */
final class LeaseLoss {

    private LeaseLoss() {}

    /** The application closed the client: no renewal can ever be sent again. */
    static DiscoException clientClosed(long leaseId) {
        return new DiscoException(
                "etcd lease " + hex(leaseId) + " can no longer be renewed: " + EtcdEndpoints.CLOSED_FIRST);
    }

    /** jetcd's failures once its client is closed: its executor rejects the call, or its channel is shut down. */
    static boolean isClosedClient(Throwable cause) {
        return cause instanceof java.util.concurrent.RejectedExecutionException
                || String.valueOf(cause == null ? null : cause.getMessage()).contains("Channel shutdown invoked");
    }

    /** No renewal was answered within the lease's validity here ({@code orphaned}: none was sent). */
    static DiscoException expired(long leaseId, long ttlSeconds, boolean orphaned) {
        return new DiscoException("etcd lease " + hex(leaseId) + " expired: no renewal was answered within its TTL of "
                + ttlSeconds + " s" + (orphaned ? " (session orphaned)" : ""));
    }

    /**
     * etcd says the lease no longer exists: expired there, or revoked. When its validity has run out here
     * too ({@code leftNanos}, the validity left here, is not positive: the process was paused, or its renewals
     * went unanswered), it expired; while it had validity left here, somebody revoked it (an operator's
     * {@code etcdctl lease revoke}, another process), or etcd expired it earlier than this process could know.
     */
    static DiscoException notFound(long leaseId, long ttlSeconds, long leftNanos, Throwable cause) {
        long left = leftNanos;
        if (left <= 0) {
            return new DiscoException(
                    "etcd lease " + hex(leaseId) + " expired: no renewal was answered within its TTL of " + ttlSeconds
                            + " s (etcd no longer knows it; the process was paused, or etcd unreachable, for longer)",
                    cause);
        }
        return new DiscoException(
                "etcd lease " + hex(leaseId) + " no longer exists on the server: revoked (by an operator or"
                        + " another process), or expired there although " + TimeUnit.NANOSECONDS.toMillis(left)
                        + " ms of its TTL of "
                        + ttlSeconds + " s were left here",
                cause);
    }

    /**
     * The session gives the lease up: the {@code what} (a delete of a key on it) was refused for good, so the
     * key would block the other owners for as long as the lease was renewed (see {@link LeaseKeeper#abandon}).
     */
    static DiscoException givenUp(long leaseId, long ttlSeconds, String what, Throwable cause) {
        return new DiscoException(
                "etcd lease " + hex(leaseId) + " given up: the " + what + " was refused and retrying"
                        + " cannot cure it, so the key would block the other owners for as long as the lease was renewed; it is no"
                        + " longer renewed and expires within its TTL of " + ttlSeconds + " s",
                EtcdErrors.failure(what, cause));
    }
}
