package io.disco.provider.zookeeper;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;

/**
 * ZooKeeper behind the client ({@code Disco.over(ZooKeeperDiscoBackend.over(builder, options))}). An owner is a
 * ZooKeeper session, and a ZooKeeper session is a client: every {@link #open()} builds a new
 * {@code CuratorFramework} from the caller's builder, starts it and opens a {@link ZooKeeperSession} on it; the
 * owner closes that client when it is closed. The caller's builder is only read.
 */
public final class ZooKeeperDiscoBackend implements DiscoBackend {

    private final CuratorFrameworkFactory.Builder builder;
    private final ZooKeeperOptions options;

    private ZooKeeperDiscoBackend(CuratorFrameworkFactory.Builder builder, ZooKeeperOptions options) {
        this.builder = builder;
        this.options = options;
    }

    /**
     * @param builder how to build each owner's client: the connect string, the session timeout (the owners' time
     *                to live), the retry policy
     * @param options the sessions' options
     * @return the backend
     * @throws NullPointerException if an argument is null
     */
    public static ZooKeeperDiscoBackend over(CuratorFrameworkFactory.Builder builder, ZooKeeperOptions options) {
        return new ZooKeeperDiscoBackend(
                Objects.requireNonNull(builder, "builder"), Objects.requireNonNull(options, "options"));
    }

    /**
     * Builds and starts a client, and opens a session on it, waiting at most the options' connect timeout.
     *
     * @return the owner
     * @throws DiscoException if ZooKeeper could not be reached in time (the message names the connect string)
     */
    @Override
    public Owner open() {
        return openOwner();
    }

    private SessionOwner openOwner() {
        CuratorFramework client = builder.build();
        client.start();
        try {
            return new SessionOwner(client, ZooKeeperSession.open(client, options));
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * Starts a leadership runner on the election {@code name} (see {@link LeadershipRunner}): each attempt
     * {@linkplain #open() opens} a client and a session of its own and campaigns with a
     * {@linkplain ZooKeeperSession#newElection(String) ZooKeeper election} on it; closing the attempt's election
     * (the runner does, when the term or the session ends) closes that session and client.
     *
     * @param name the election's ZooKeeper name, absolute
     * @param options the value, task, listener, requeue and backoff
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     */
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options) {
        String checked = NodeLayout.checkName(name);
        Objects.requireNonNull(options, "options");
        return LeadershipRunner.start(
                checked,
                () -> {
                    SessionOwner owner = openOwner();
                    try {
                        return owner.session().newElection(checked, owner::close);
                    } catch (RuntimeException e) {
                        owner.close();
                        throw e;
                    }
                },
                options);
    }

    @Override
    public String describe() {
        return "ZooKeeper at " + builder.getEnsembleProvider().getConnectionString();
    }

    /** The options' owner wait; by default the session timeout the builder asks for (the owners' time to live). */
    @Override
    public java.time.Duration ownerWait() {
        return options.ownerWait().orElse(java.time.Duration.ofMillis(builder.getSessionTimeoutMs()));
    }

    /** One session on a client of its own. */
    private record SessionOwner(CuratorFramework client, ZooKeeperSession session) implements Owner {

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
        public java.util.List<io.disco.core.Claimant> claimants(io.disco.core.Primitive primitive, String name) {
            return session.claimants(primitive, name);
        }

        @Override
        public java.time.Duration ttl() {
            return session.ttl();
        }

        @Override
        public java.time.Duration remainingValidity() {
            return session.remainingValidity();
        }

        @Override
        public String id() {
            return Long.toHexString(session.sessionId());
        }

        @Override
        public String describe() {
            return "session 0x" + Long.toHexString(session.sessionId()) + " (timeout "
                    + session.ttl().toMillis() + " ms)";
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
            try {
                session.close();
            } finally {
                client.close();
            }
        }
    }
}
