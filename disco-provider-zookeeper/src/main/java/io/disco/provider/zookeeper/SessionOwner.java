package io.disco.provider.zookeeper;

import io.disco.client.Barriers;
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
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooKeeper;

/**
 * An owner of the test hooks' backend ({@link ZooKeeperDiscoBackend}): a {@link ZooKeeperSession} (itself the
 * owner of the application's client, {@link ZooKeeperProvider}) on a {@code CuratorFramework} of its own, everything
 * it answers the session's. Closing it closes the session and then the client, and leaves the backend's open owners.
 */
final class SessionOwner implements DiscoBackend.Owner {

    private final CuratorFramework client;
    private final ZooKeeperSession session;
    /** The ensemble the client was built for, where a second handle ends its session. */
    private final String connectString;
    /** Whether the client runs Curator's ensemble tracker. */
    private final boolean tracked;
    /** The backend's open owners, which this one leaves when closed. */
    private final Set<SessionOwner> owners;

    SessionOwner(
            CuratorFramework client,
            ZooKeeperSession session,
            String connectString,
            boolean tracked,
            Set<SessionOwner> owners) {
        this.client = client;
        this.session = session;
        this.connectString = connectString;
        this.tracked = tracked;
        this.owners = owners;
    }

    /** @return the session */
    ZooKeeperSession session() {
        return session;
    }

    /** @return the ensemble the client was built for, where a second handle ends its session */
    String connectString() {
        return connectString;
    }

    /** @return whether the client runs Curator's ensemble tracker */
    boolean tracked() {
        return tracked;
    }

    /** @return the backend's open owners, which this one leaves when closed */
    Set<SessionOwner> owners() {
        return owners;
    }

    /** @return the client's current ZooKeeper handle */
    ZooKeeper handle() throws Exception {
        return client.getZookeeperClient().getZooKeeper();
    }

    @Override
    public LockService newLock(String name) {
        return session.newLock(name);
    }

    @Override
    public RWLockService newRWLock(String name) {
        return session.newRWLock(name);
    }

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
    public Barriers barriers() {
        return session.barriers();
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
    public String id() {
        return session.id();
    }

    @Override
    public String describe() {
        return session.describe();
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
    public void close() {
        owners.remove(this);
        try {
            session.close();
        } finally {
            client.close();
        }
    }

    @Override
    public String toString() {
        return describe();
    }
}
