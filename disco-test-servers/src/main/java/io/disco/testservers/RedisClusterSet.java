package io.disco.testservers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * A Redis Cluster for tests: three primaries ({@link #start()}), or three primaries with a replica each ({@link
 * #startWithReplicas()}), each a {@link RedisServer} on a free port of {@code 127.0.0.1} (its cluster bus on another
 * free port, {@code cluster-port}) with {@code cluster-enabled yes}, {@code cluster-node-timeout 2000} and its {@code
 * nodes.conf} in its own directory. The cluster is made with {@code redis-cli --cluster create} (Debian's {@code
 * redis-tools}), which gives each primary a third of the 16384 slots.
 *
 * <pre>{@code
 * try (RedisClusterSet cluster = RedisClusterSet.start()) {
 *     RedisClusterClient client = RedisClusterClient.create(cluster.uri());
 * }
 * }</pre>
 *
 * <p>The start returns once every node says {@code cluster_state:ok}, knows every other node and sees every slot
 * served. Nodes are plain {@link RedisServer}s: tests kill, freeze and restart them with its hooks. Every wait is
 * bounded. {@link #close()} kills every node and deletes their directories; it is idempotent, and a JVM shutdown hook
 * of each node closes what a test forgot.
 */
public final class RedisClusterSet implements AutoCloseable {

    /** The number of primaries. */
    public static final int PRIMARIES = 3;
    /** The slots of a Redis Cluster. */
    public static final int SLOTS = 16_384;
    /** How long {@link #start()} waits for {@code redis-cli --cluster create} and then for every node to be ok. */
    public static final int START_TIMEOUT_SECONDS = 60;

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final int replicasPerPrimary;
    private final List<RedisServer> nodes = new ArrayList<>();
    private boolean closed;

    private RedisClusterSet(int replicasPerPrimary) {
        this.replicasPerPrimary = replicasPerPrimary;
    }

    /**
     * Starts three primaries, makes them a cluster and waits until every node is ok.
     *
     * @return the running cluster; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} or {@code redis-cli} is not installed (the message says
     *     how to install it), or the cluster was not ok within {@value #START_TIMEOUT_SECONDS} s; what was started is
     *     stopped
     */
    public static RedisClusterSet start() {
        return start(0);
    }

    /**
     * Starts three primaries and three replicas, one of each primary, makes them a cluster and waits until every node
     * is ok: for tests of a cluster failover.
     *
     * @return the running cluster; close it to stop it and delete its data
     * @throws IllegalStateException as {@link #start()}
     */
    public static RedisClusterSet startWithReplicas() {
        return start(1);
    }

    private static RedisClusterSet start(int replicasPerPrimary) {
        RedisClusterSet set = new RedisClusterSet(replicasPerPrimary);
        return LocalResources.startedOrClosed(set, set::startAll, set::close);
    }

    private synchronized void startAll() {
        RedisBinary.cli(); // fail before starting anything when it is missing
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        for (int i = 0; i < PRIMARIES * (1 + replicasPerPrimary); i++) {
            nodes.add(RedisServer.startWith(
                    "Redis cluster node",
                    (port, dir) -> List.of(
                            "cluster-enabled yes",
                            "cluster-config-file " + dir.resolve("nodes.conf").toAbsolutePath(),
                            "cluster-node-timeout 2000",
                            "cluster-port " + busPort(port))));
        }
        create(deadline);
        awaitOk(deadline);
    }

    /** @return a free port for a node's cluster bus, not its client port */
    private static int busPort(int clientPort) {
        while (true) {
            int port = RedisServer.freePort("a Redis cluster bus");
            if (port != clientPort) {
                return port;
            }
        }
    }

    /** {@code redis-cli --cluster create <nodes> --cluster-replicas <n> --cluster-yes}, bounded. */
    private void create(long deadline) {
        List<String> command = new ArrayList<>(List.of(RedisBinary.cli().toString(), "--cluster", "create"));
        nodes.forEach(node -> command.add(node.address().toString()));
        command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerPrimary), "--cluster-yes"));
        try {
            Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
            cli.getOutputStream().close();
            long left = Math.max(1, deadline - System.nanoTime());
            if (!cli.waitFor(left, TimeUnit.NANOSECONDS)) {
                cli.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " did not finish within " + START_TIMEOUT_SECONDS + " s");
            }
            String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (cli.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command) + " failed (" + cli.exitValue() + "):\n" + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run redis-cli: " + e.getMessage() + ". " + RedisBinary.NO_CLI, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while making the Redis cluster", e);
        }
    }

    /** Waits until every node says {@code cluster_state:ok}, every slot ok and every node known. */
    private void awaitOk(long deadline) {
        List<RedisServer> pending = new ArrayList<>(nodes);
        Map<RedisServer, String> last = new LinkedHashMap<>();
        while (true) {
            pending.removeIf(node -> {
                try {
                    Map<String, String> info = clusterInfo(node);
                    last.put(node, info.toString());
                    return "ok".equals(info.get("cluster_state"))
                            && String.valueOf(SLOTS).equals(info.get("cluster_slots_ok"))
                            && String.valueOf(nodes.size()).equals(info.get("cluster_known_nodes"));
                } catch (IllegalStateException e) {
                    last.put(node, e.getMessage());
                    return false;
                }
            });
            if (pending.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the Redis cluster was not ok within " + START_TIMEOUT_SECONDS + " s: "
                        + pending.stream()
                                .map(n -> n.address() + " says " + last.get(n))
                                .collect(Collectors.joining("; ")));
            }
            LockSupport.parkNanos(POLL_NANOS); // nodes gossip; no event tells a client the cluster is ok
        }
    }

    /** @return {@code CLUSTER INFO}'s fields */
    private static Map<String, String> clusterInfo(RedisServer node) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : ((String) node.command("CLUSTER", "INFO")).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
            }
        }
        return fields;
    }

    /**
     * @return every node, in start order: with replicas, {@code redis-cli} made the first three the primaries (roles
     *     change when a replica takes over)
     */
    public synchronized List<RedisServer> nodes() {
        return List.copyOf(nodes);
    }

    /** @return a seed URI for a cluster client, the first node's: {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return nodes().get(0).uri();
    }

    /** @return every node's URI, in the order of {@link #nodes()} */
    public List<String> uris() {
        return nodes().stream().map(RedisServer::uri).toList();
    }

    /**
     * The primary serving {@code key}'s slot ({@code CLUSTER KEYSLOT}, so hash tags count), as the first node that
     * answers sees it ({@code CLUSTER SLOTS}).
     *
     * @param key a key
     * @return the node whose port serves the slot
     * @throws IllegalStateException if no node answers, or the slot is served by no node of this set
     */
    public RedisServer nodeServing(String key) {
        Objects.requireNonNull(key, "key");
        IllegalStateException failure = new IllegalStateException("no node of " + this + " answered");
        for (RedisServer node : nodes()) {
            try {
                long slot = (Long) node.command("CLUSTER", "KEYSLOT", key);
                for (Object range : (List<?>) node.command("CLUSTER", "SLOTS")) {
                    List<?> r = (List<?>) range;
                    if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
                        long port = (Long) ((List<?>) r.get(2)).get(1);
                        return nodes().stream()
                                .filter(n -> n.port() == port)
                                .findFirst()
                                .orElseThrow(
                                        () -> new IllegalStateException("slot " + slot + " is served by port " + port));
                    }
                }
                throw new IllegalStateException(
                        "slot " + slot + " is served by no node, as " + node.address() + " sees it");
            } catch (IllegalStateException e) {
                failure.addSuppressed(e);
            }
        }
        throw failure;
    }

    /** Kills every node and deletes their directories. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        IllegalStateException failure = new IllegalStateException("closing " + this + " failed");
        for (RedisServer node : nodes) {
            LocalResources.closeStep(node::close, failure);
        }
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    @Override
    public synchronized String toString() {
        return "Redis cluster of "
                + nodes.stream().map(n -> n.address().toString()).collect(Collectors.joining(", "));
    }
}
