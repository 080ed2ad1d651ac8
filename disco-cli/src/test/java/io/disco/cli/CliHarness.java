package io.disco.cli;

import static org.awaitility.Awaitility.await;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RedisExtension;
import io.disco.testservers.ZooKeeperExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs {@code disco} commands in the test JVM against a test cluster, with their output captured; and what the tests
 * need of that cluster besides (sessions, names, its keys). On the cluster of a test class's {@link EtcdExtension}
 * ({@link #CliHarness(EtcdExtension)}), of one a test started itself ({@link #on(EtcdCluster)}), or on the ZooKeeper
 * server of a {@link ZooKeeperExtension} ({@link #on(ZooKeeperExtension)}).
 */
final class CliHarness implements AutoCloseable {

    /** What one run printed, and its exit code. */
    record Run(int code, String out, String err) {}

    /** The flags that name the cluster, added to a command line that names none. */
    private final Supplier<List<String>> connection;

    private final Supplier<Client> client;
    /** The client this harness opened itself, or null. */
    private final Client own;

    private CliHarness(Supplier<List<String>> connection, Supplier<Client> client, Client own) {
        this.connection = connection;
        this.client = client;
        this.own = own;
    }

    /**
     * On the cluster of a test class's extension, read at each use (it runs only during the class's tests), with the
     * extension's client.
     */
    CliHarness(EtcdExtension etcd) {
        this(() -> List.of("--endpoints=" + String.join(",", etcd.cluster().endpoints())), etcd::client, null);
    }

    /** On a cluster the test started itself, with a client of its own that {@link #close()} closes. */
    static CliHarness on(EtcdCluster cluster) {
        Client own = EtcdClaims.client(cluster);
        return new CliHarness(() -> List.of("--endpoints=" + String.join(",", cluster.endpoints())), () -> own, own);
    }

    /**
     * On the ZooKeeper server of a test class's extension ({@code --backend zookeeper --connect ...}); the test's own
     * ZooKeeper clients are its {@link ZkClaims}'.
     */
    static CliHarness on(ZooKeeperExtension zk) {
        return new CliHarness(
                () -> List.of("--backend=zookeeper", "--connect=" + zk.connectString()),
                () -> {
                    throw new IllegalStateException("a ZooKeeper harness has no jetcd client: use ZkClaims");
                },
                null);
    }

    /**
     * On the Redis server of a test class's extension ({@code --backend redis --redis-uri ...}); the test's own Redis
     * clients are its {@link RedisClaims}'.
     */
    static CliHarness on(RedisExtension redis) {
        return new CliHarness(
                () -> List.of("--backend=redis", "--redis-uri=" + redis.uri()),
                () -> {
                    throw new IllegalStateException("a Redis harness has no jetcd client: use RedisClaims");
                },
                null);
    }

    /** A jetcd client of the same cluster, for the test's own reads and writes. */
    Client client() {
        return client.get();
    }

    Run disco(String stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        InputStream in = new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8));
        int code = DiscoCli.run(
                withConnection(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                in);
        Run r = new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        System.out.println("$ disco " + String.join(" ", args) + "  -> " + code + "\n" + r.out() + r.err());
        return r;
    }

    /** {@code args} with the flags that name the harness's cluster, unless they name one ({@code --endpoints}, ...). */
    String[] withConnection(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        if (all.stream()
                .noneMatch(a -> a.startsWith("--endpoints")
                        || a.startsWith("--connect")
                        || a.startsWith("--backend")
                        || a.startsWith("--redis-uri"))) {
            all.addAll(connection.get());
        }
        return all.toArray(String[]::new);
    }

    EtcdSession session(String clientId) {
        return EtcdSession.open(
                client(),
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(20))
                        .clientId(clientId)
                        .build());
    }

    static String name(String what) {
        return "/test/cli/" + what + "/" + UUID.randomUUID();
    }

    static String hex(EtcdSession s) {
        return Long.toHexString(s.leaseId());
    }

    /** How many keys {@code key} is now: 1 or 0. */
    long count(String key) throws Exception {
        return client().getKVClient()
                .get(ByteSequence.from(key, StandardCharsets.UTF_8))
                .get(5, TimeUnit.SECONDS)
                .getCount();
    }

    /** Whether {@code key} exists now. */
    boolean exists(String key) throws Exception {
        return count(key) == 1;
    }

    /** Waits until {@code key} exists (a claim is written), at most {@code wait}. */
    void awaitKey(String key, Duration wait) {
        await().atMost(wait).until(() -> exists(key));
    }

    /**
     * One lock name held by one session's claim ({@code grant} through {@code holder}) while another session's claim
     * ({@code waiter}, granted through {@code next}) queues behind it.
     */
    record LockQueue(LockService holder, Grant grant, LockService waiter, CompletableFuture<Grant> next) {}

    /**
     * Locks {@code name} through {@code first}, then queues {@code second} behind it and waits (at most {@code wait})
     * until the waiter's key is written.
     */
    LockQueue lockQueue(String name, EtcdSession first, EtcdSession second, Duration wait) throws Exception {
        LockService holder = first.newLock(name);
        LockService waiter = second.newLock(name);
        Grant grant = holder.lock(wait);
        CompletableFuture<Grant> next = waiter.lockAsync();
        awaitKey(name + "/" + hex(second), wait);
        return new LockQueue(holder, grant, waiter, next);
    }

    /** A {@code disco watch} running on its own thread until {@link #close}d (interrupted), its output captured. */
    final class Watching implements AutoCloseable {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final AtomicInteger code = new AtomicInteger(-1);
        private final Thread thread;
        private final String[] args;

        Watching(String... args) {
            this.args = args;
            PrintStream print = new PrintStream(bytes, true, StandardCharsets.UTF_8);
            thread = new Thread(
                    () -> code.set(DiscoCli.run(withConnection(args), print, print, InputStream.nullInputStream())),
                    "disco-watch");
            thread.start();
        }

        /** Everything printed so far (stdout and stderr, in order). */
        String text() {
            synchronized (bytes) {
                return bytes.toString(StandardCharsets.UTF_8);
            }
        }

        /** Whether a line printed so far contains every one of {@code parts}. */
        boolean printed(String... parts) {
            return text().lines().anyMatch(l -> List.of(parts).stream().allMatch(l::contains));
        }

        /** The exit code once closed (-1 while running). */
        int code() {
            return code.get();
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join(10_000);
            System.out.println("$ disco " + String.join(" ", args) + "  -> " + code.get() + "\n" + text());
        }
    }

    @Override
    public void close() {
        if (own != null) {
            own.close();
        }
    }
}
