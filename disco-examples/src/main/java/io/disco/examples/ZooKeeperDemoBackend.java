package io.disco.examples;

import io.disco.client.DiscoBackend;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.zookeeper.ZooKeeperDiscoBackend;
import io.disco.provider.zookeeper.ZooKeeperIssuedBound;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.testservers.ZooKeeperServer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.DefaultZookeeperFactory;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * The scenarios on ZooKeeper, through {@link ZooKeeperDiscoBackend}: an owner is a ZooKeeper session on a Curator
 * client of its own. {@link #embedded()} starts an in-process server ({@link ZooKeeperServer}): nothing needs to
 * be installed. A frozen owner's session is ended by the server, as it ends the session of a client that stopped
 * pinging for its session timeout; the demo does it at once, through a second handle that attaches to the session
 * with its id and password and closes it (the frozen client is told nothing until it talks to the server again).
 */
public final class ZooKeeperDemoBackend implements DemoBackend {

    /** The usual owner's session timeout. */
    private static final Duration TTL = Duration.ofSeconds(10);

    private static final Duration WAIT = Duration.ofSeconds(15);

    private final ZooKeeperServer server;
    private final String connectString;
    private final CuratorFramework admin;
    private final ZooKeeperSession adminSession;
    /** The ZooKeeper handles of the owners' clients, to find a frozen owner's session password. */
    private final Queue<ZooKeeper> handles = new ConcurrentLinkedQueue<>();

    private ZooKeeperDemoBackend(ZooKeeperServer server, String connectString) {
        this.server = server;
        this.connectString = connectString;
        this.admin = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) TTL.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        admin.start();
        this.adminSession = ZooKeeperSession.open(admin, options());
    }

    /**
     * Starts an in-process ZooKeeper server and connects to it.
     *
     * @return the backend; closing it stops the server
     */
    public static ZooKeeperDemoBackend embedded() {
        ZooKeeperServer server = ZooKeeperServer.start();
        try {
            return new ZooKeeperDemoBackend(server, server.connectString());
        } catch (RuntimeException e) {
            try {
                server.close();
            } catch (java.io.IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Connects to a running ZooKeeper, which closing the backend leaves running.
     *
     * @param connectString the ensemble's connect string
     * @return the backend
     */
    public static ZooKeeperDemoBackend connect(String connectString) {
        return new ZooKeeperDemoBackend(null, connectString);
    }

    private static ZooKeeperOptions options() {
        return ZooKeeperOptions.builder()
                .connectTimeout(WAIT)
                .requestTimeout(WAIT)
                .build();
    }

    private ZooKeeperDiscoBackend backend(Duration ttl) {
        DefaultZookeeperFactory factory = new DefaultZookeeperFactory();
        return ZooKeeperDiscoBackend.over(
                CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .sessionTimeoutMs((int) ttl.toMillis())
                        .connectionTimeoutMs((int) Math.min(ttl.toMillis(), 5_000))
                        .retryPolicy(new RetryNTimes(3, 100))
                        .zookeeperFactory((cs, timeout, watcher, canBeReadOnly) -> {
                            ZooKeeper handle = factory.newZooKeeper(cs, timeout, watcher, canBeReadOnly);
                            handles.removeIf(h -> !h.getState().isAlive());
                            handles.add(handle);
                            return handle;
                        }),
                options());
    }

    @Override
    public String describe() {
        return "ZooKeeper: " + connectString + (server == null ? "" : " (in-process)");
    }

    @Override
    public DiscoBackend.Owner open() {
        return backend(TTL).open();
    }

    @Override
    public DiscoBackend.Owner open(Duration ttl) {
        return backend(ttl).open();
    }

    @Override
    public String freeze(DiscoBackend.Owner owner) {
        long id = Long.parseUnsignedLong(owner.id(), 16);
        ZooKeeper handle = handles.stream()
                .filter(h -> h.getSessionId() == id)
                .findFirst()
                .orElseThrow(() ->
                        new IllegalArgumentException("session 0x" + owner.id() + " is not one of this backend's"));
        CountDownLatch attached = new CountDownLatch(1);
        try {
            ZooKeeper twin = new ZooKeeper(
                    connectString,
                    handle.getSessionTimeout(),
                    e -> {
                        if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                            attached.countDown();
                        }
                    },
                    id,
                    handle.getSessionPasswd());
            try {
                if (!attached.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("could not attach to session 0x" + owner.id());
                }
            } finally {
                twin.close(); // ends the session on the server: its ephemeral nodes are deleted
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while freezing session 0x" + owner.id(), e);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return "its pings stop; ZooKeeper ends its session, as after "
                + owner.ttl().toSeconds() + " s without a ping (the demo ends it at once)";
    }

    @Override
    public IssuedBound issuedBound() {
        return ZooKeeperIssuedBound.of(admin);
    }

    @Override
    public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options, Duration ttl) {
        return backend(ttl).newLeadershipRunner(name, options);
    }

    @Override
    public List<Claimant> claimants(Primitive primitive, String name) {
        return adminSession.claimants(primitive, name);
    }

    @Override
    public void deleteKey(String key) throws Exception {
        admin.delete().forPath(key);
    }

    @Override
    public void close() {
        try {
            adminSession.close();
            admin.close();
        } finally {
            if (server != null) {
                try {
                    server.close();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        }
    }
}
