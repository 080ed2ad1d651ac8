package io.disco.provider.etcd;

import io.disco.election.ElectionService;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.etcd.jetcd.Client;

/**
 * Entry point for services that own their session, like the Go library's {@code etcd.NewLock} and {@code etcd.NewRWLock}:
 * each call opens a new {@link EtcdSession} (one lease and keepalive) that the returned service
 * closes, and revokes, when it is closed. To run many services on one lease, open an
 * {@link EtcdSession} and create them from it instead.
 *
 * <p>The caller owns the jetcd {@link Client}; nothing here closes it.
 */
public final class EtcdProvider {

    private EtcdProvider() {
    }

    /**
     * A lock service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param prefix the lock's name, for example {@code /locks/my-resource}
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static LockService newLock(Client client, String prefix) {
        return newLock(client, prefix, EtcdOptions.defaults());
    }

    /**
     * A lock service on its own session.
     *
     * @param client the caller's jetcd client
     * @param prefix the lock's name, for example {@code /locks/my-resource}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static LockService newLock(Client client, String prefix, EtcdOptions options) {
        EtcdLockService.validPrefix(prefix);
        EtcdSession session = EtcdSession.open(client, options);
        try {
            return EtcdLockService.create(session, prefix, true);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /**
     * A read/write lock service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param prefix the read/write lock's name, for example {@code /rwlocks/my-resource}
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static RWLockService newRWLock(Client client, String prefix) {
        return newRWLock(client, prefix, EtcdOptions.defaults());
    }

    /**
     * A read/write lock service on its own session.
     *
     * @param client the caller's jetcd client
     * @param prefix the read/write lock's name, for example {@code /rwlocks/my-resource}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static RWLockService newRWLock(Client client, String prefix, EtcdOptions options) {
        EtcdLockService.validPrefix(prefix);
        EtcdSession session = EtcdSession.open(client, options);
        try {
            return EtcdRWLockService.create(session, prefix, true);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }

    /**
     * An election service on its own session with the default options (TTL 30 s).
     *
     * @param client the caller's jetcd client
     * @param prefix the election's name, for example {@code /elections/my-service}
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static ElectionService newElection(Client client, String prefix) {
        return newElection(client, prefix, EtcdOptions.defaults());
    }

    /**
     * An election service on its own session.
     *
     * @param client the caller's jetcd client
     * @param prefix the election's name, for example {@code /elections/my-service}
     * @param options the session's TTL and request timeout
     * @return the service; closing it revokes its session's lease
     * @throws IllegalArgumentException if {@code prefix} is null or blank
     * @throws io.disco.fencing.DiscoException if etcd does not grant a lease in time
     */
    public static ElectionService newElection(Client client, String prefix, EtcdOptions options) {
        EtcdLockService.validPrefix(prefix);
        EtcdSession session = EtcdSession.open(client, options);
        try {
            return EtcdElectionService.create(session, prefix, true);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
    }
}
