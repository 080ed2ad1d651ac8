package io.disco.examples;

import io.disco.client.TestableBackend;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.redis.RedisDiscoBackend;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.zookeeper.ZooKeeperDiscoBackend;
import io.disco.provider.zookeeper.ZooKeeperIssuedBound;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.testservers.RedisServer;
import io.disco.testservers.ZooKeeperServer;
import io.etcd.jetcd.Client;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The coordination service a scenario runs on: the client SPI's backend with its test hooks
 * ({@link TestableBackend}: owners of a given time to live, freezing one, a key deleted as an operator would, a
 * leadership runner, the keys on a name), which the scenarios call the same on etcd, ZooKeeper and Redis, plus what only the
 * demo needs: what the scenarios print as where they run, the bound the resources' guards confirm tokens with, and
 * closing what it opened. Closing it closes what it opened (clients, an embedded server it started); owners and
 * runners are the caller's to close.
 */
public final class DemoBackend implements AutoCloseable {

    /** How long connecting, and each request of ZooKeeper's hooks, may take. */
    private static final Duration WAIT = Duration.ofSeconds(15);

    /** The Redis owners' time to live. */
    private static final Duration REDIS_TTL = Duration.ofSeconds(10);

    /** The usual ZooKeeper owner's session timeout. */
    private static final Duration ZOOKEEPER_TTL = Duration.ofSeconds(10);

    private final TestableBackend backend;
    private final String where;
    private final IssuedBound issuedBound;
    /** What this backend opened, closed by {@link #close()} in this order. */
    private final List<AutoCloseable> opened;

    private DemoBackend(TestableBackend backend, String where, IssuedBound issuedBound, List<AutoCloseable> opened) {
        this.backend = backend;
        this.where = where;
        this.issuedBound = issuedBound;
        this.opened = opened;
    }

    /**
     * The scenarios on etcd: opens a jetcd client of {@code endpoints} and waits (at most 15 s) until etcd has
     * answered; an owner is an {@code EtcdSession} (one lease, TTL 30 s unless asked otherwise), frozen by orphaning
     * it. Closing the backend closes the client.
     *
     * @param endpoints etcd client URLs
     * @return the backend; close it
     * @throws Exception if etcd did not answer
     */
    public static DemoBackend etcd(List<String> endpoints) throws Exception {
        Client client = Cli.etcdClient(endpoints);
        try {
            Cli.connect(client, WAIT);
            return new DemoBackend(
                    EtcdProvider.testableBackend(client, EtcdOptions.defaults()),
                    "etcd: " + String.join(",", endpoints),
                    EtcdIssuedBound.of(client),
                    List.of(client));
        } catch (Exception e) {
            client.close();
            throw e;
        }
    }

    /**
     * The scenarios on a running ZooKeeper, which closing the backend leaves running: an owner is a ZooKeeper session
     * on a Curator client of its own ({@link ZooKeeperDiscoBackend}, session timeout 10 s unless asked otherwise),
     * frozen by pointing its client at a port that answers nothing, so that the server expires its session after its
     * timeout, as a stopped process's. Closing the backend closes its admin clients.
     *
     * @param connectString the ensemble's connect string
     * @return the backend
     */
    public static DemoBackend zooKeeper(String connectString) {
        return zooKeeper(connectString, null);
    }

    /**
     * The scenarios on an in-process ZooKeeper server ({@link ZooKeeperServer}) started here: nothing needs to be
     * installed. See {@link #zooKeeper(String)}; closing the backend also stops the server.
     *
     * @return the backend; close it
     */
    public static DemoBackend embeddedZooKeeper() {
        ZooKeeperServer server = ZooKeeperServer.start();
        try {
            return zooKeeper(server.connectString(), server);
        } catch (RuntimeException e) {
            try {
                server.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static DemoBackend zooKeeper(String connectString, ZooKeeperServer server) {
        Objects.requireNonNull(connectString, "connectString");
        // No ensemble tracker: an owner talks to what the connect string names, and a frozen one stays frozen.
        ZooKeeperDiscoBackend backend = ZooKeeperDiscoBackend.over(
                ttl -> CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .ensembleTracker(false)
                        .sessionTimeoutMs((int) ttl.toMillis())
                        .connectionTimeoutMs((int) Math.min(ttl.toMillis(), 5_000))
                        .retryPolicy(new RetryNTimes(3, 100)),
                ZOOKEEPER_TTL,
                ZooKeeperOptions.builder()
                        .connectTimeout(WAIT)
                        .requestTimeout(WAIT)
                        .build());
        CuratorFramework admin = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs((int) ZOOKEEPER_TTL.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        admin.start();
        List<AutoCloseable> opened = new ArrayList<>(List.of(backend, admin));
        if (server != null) {
            opened.add(server);
        }
        return new DemoBackend(
                backend,
                "ZooKeeper: " + connectString + (server == null ? "" : " (in-process)"),
                ZooKeeperIssuedBound.of(admin),
                List.copyOf(opened));
    }

    /**
     * The scenarios on a throwaway {@code redis-server} ({@link RedisServer}: a free loopback port, AOF with
     * {@code appendfsync always}, so the provider's start check accepts it) started here: an owner is a
     * {@code RedisSession} on one Lettuce client ({@link RedisDiscoBackend}, TTL 10 s unless asked otherwise), frozen by
     * stopping its renewals, so that its claims expire on the server after their TTL, as a stopped process's. The
     * resources' guards confirm tokens with the demo's own bound ({@link RedisDemoBound}: the library has none for
     * Redis). Closing the backend closes the client and stops the server.
     *
     * @return the backend; close it
     */
    public static DemoBackend embeddedRedis() {
        RedisServer server = RedisServer.start();
        RedisClient client = null;
        try {
            client = RedisClient.create();
            RedisURI uri = RedisURI.create(server.uri());
            RedisDiscoBackend backend = RedisDiscoBackend.over(
                    client,
                    uri,
                    RedisOptions.builder()
                            .ttl(REDIS_TTL)
                            .connectTimeout(WAIT)
                            .requestTimeout(WAIT)
                            .build());
            StatefulRedisConnection<String, String> admin = client.connect(uri);
            RedisClient c = client;
            return new DemoBackend(
                    backend,
                    "Redis: " + server.uri() + " (a throwaway redis-server, AOF appendfsync always)",
                    new RedisDemoBound(admin),
                    List.of(backend, admin, () -> c.shutdown(Duration.ZERO, WAIT), server));
        } catch (RuntimeException e) {
            if (client != null) {
                client.shutdown(Duration.ZERO, WAIT);
            }
            server.close();
            throw e;
        }
    }

    /** @return the backend the scenarios open their owners on and freeze them through */
    public TestableBackend backend() {
        return backend;
    }

    /** @return what the scenarios print as where they run, for example {@code etcd: 127.0.0.1:2379} */
    public String describe() {
        return where;
    }

    /** @return the guards' bound: how far the backend has issued tokens */
    public IssuedBound issuedBound() {
        return issuedBound;
    }

    /** Closes what this backend opened: its clients, and the in-process server it started. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (AutoCloseable c : opened) {
            try {
                c.close();
            } catch (Exception e) {
                RuntimeException r = e instanceof RuntimeException re
                        ? re
                        : e instanceof IOException io ? new UncheckedIOException(io) : new IllegalStateException(e);
                if (failure == null) {
                    failure = r;
                } else {
                    failure.addSuppressed(r);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
