package io.disco.provider.etcd;

import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * An {@link EtcdSession} as a backend's owner: its services, listing, {@code done()} and {@code err()} are the
 * session's, {@link #id()} is its lease in hex, and {@link #close()} closes the session (revoking its lease). The one
 * owner of the etcd backend, for the client ({@link EtcdProvider#disco}) and for the test hooks
 * ({@link EtcdProvider#testableBackend}, which freeze it by orphaning its session and end it by revoking its lease).
 *
 * @param session the session; this owner closes it
 */
public record EtcdSessionOwner(EtcdSession session) implements DiscoBackend.Owner {

    @Override
    public LockService newLock(String name) {
        return session.newLock(name);
    }

    @Override
    public RWLockService newRWLock(String name) {
        return session.newRWLock(name);
    }

    /** One more holder on the session's lease: a session allows several semaphore services per name. */
    @Override
    public SemaphoreService newSemaphore(String name, int limit) {
        return session.newSemaphore(name, limit);
    }

    @Override
    public ElectionService newElection(String name) {
        return session.newElection(name);
    }

    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return session.claimants(primitive, name);
    }

    @Override
    public CompletionStage<Void> done() {
        return session.done();
    }

    @Override
    public Optional<? extends DiscoException> err() {
        return session.err();
    }

    @Override
    public String id() {
        return Long.toHexString(session.leaseId());
    }

    @Override
    public String describe() {
        return "lease " + Long.toHexString(session.leaseId()) + " (TTL "
                + session.ttl().toSeconds() + " s)";
    }

    @Override
    public Duration ttl() {
        return session.ttl();
    }

    @Override
    public Duration remainingValidity() {
        return session.remainingValidity();
    }

    @Override
    public void close() {
        session.close();
    }
}
