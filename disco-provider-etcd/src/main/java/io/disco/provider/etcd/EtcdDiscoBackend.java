package io.disco.provider.etcd;

import io.disco.client.Claimant;
import io.disco.client.DiscoBackend;
import io.disco.client.Primitive;
import io.disco.core.ClaimMetadata;
import io.disco.election.ElectionService;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.Client;
import java.util.List;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/** The client's backend on etcd: an owner is an {@link EtcdSession} (one lease), its services the session's. */
final class EtcdDiscoBackend implements DiscoBackend {

    private final Client client;
    private final EtcdOptions options;

    EtcdDiscoBackend(Client client, EtcdOptions options) {
        this.client = client;
        this.options = options;
    }

    @Override
    public Owner open() {
        return new SessionOwner(EtcdSession.open(client, options));
    }

    @Override
    public String describe() {
        return "etcd";
    }

    private record SessionOwner(EtcdSession session) implements Owner {

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
            io.disco.core.Primitive kind = switch (primitive) {
                case LOCK -> io.disco.core.Primitive.LOCK;
                case READ_WRITE_LOCK -> io.disco.core.Primitive.RWLOCK;
                case SEMAPHORE -> io.disco.core.Primitive.SEMAPHORE;
                case ELECTION -> io.disco.core.Primitive.ELECTION;
            };
            return session.claimants(kind, name).stream().map(SessionOwner::claimant).toList();
        }

        private static Claimant claimant(io.disco.core.Claimant c) {
            ClaimMetadata m = c.metadata();
            Optional<Claimant.Holder> holder = m.source() == ClaimMetadata.Source.DISCO
                    ? Optional.of(new Claimant.Holder(m.host(), m.pid(), m.clientId(), m.thread(), m.claimedAt()))
                    : Optional.empty();
            return new Claimant(c.key(), c.leaseId(), Claimant.Role.valueOf(c.role().name()), c.position(),
                    Claimant.Mode.valueOf(c.mode().name()), c.token(), holder, c.value());
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
}
