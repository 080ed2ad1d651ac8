package io.disco.testservers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * A Sentinel-managed Redis for tests: a primary, two replicas and three sentinels, each a {@link RedisServer} process
 * on a free port of {@code 127.0.0.1} with a directory of its own. The sentinels monitor the primary as {@value
 * #MASTER_NAME} with quorum 2, {@code down-after-milliseconds 1000}, {@code failover-timeout 3000} and {@code
 * parallel-syncs 1}, so a killed or frozen primary is replaced within a few seconds. Each sentinel has its own
 * configuration file, which it rewrites as it learns the deployment.
 *
 * <pre>{@code
 * try (RedisSentinelSet redis = RedisSentinelSet.start()) {
 *     RedisClient client = RedisClient.create(redis.sentinelUri());
 *     RedisServer old = redis.primary();
 *     old.kill();
 *     RedisServer promoted = redis.awaitFailover(old, Duration.ofSeconds(15));
 * }
 * }</pre>
 *
 * <p>{@link #start()} returns once every sentinel reports the primary with two replicas and two other sentinels, so a
 * failover can start at once. The data servers are plain {@link RedisServer}s ({@link #servers()}): tests kill,
 * freeze and restart them with its hooks; a restarted old primary comes back as a primary until the sentinels
 * reconfigure it as a replica. Every wait is bounded. {@link #close()} kills every process (sentinels first) and
 * deletes their directories; it is idempotent, and a JVM shutdown hook of each process closes what a test forgot.
 *
 * <p>{@link #startNetworked()} runs the same deployment partitionable: each data server in a network namespace of its
 * own ({@link MemberNetwork}, one per data server) with a sentinel beside it, as sentinels are co-located with the data
 * servers in production: data server {@code i} listens on {@code network().address(i)}:{@value #NETWORKED_PORT},
 * sentinel {@code i} on the same address, port {@value #NETWORKED_SENTINEL_PORT}, each announcing that address
 * ({@code replica-announce-ip}, {@code sentinel announce-ip}). A {@link MemberNetwork#cut cut} of member {@code i} cuts
 * its data server and its sentinel off together; processes of the root namespace (tests, proxies) still reach every
 * server through the bridge. Cutting the primary off from the other two members is the split where the old primary
 * keeps serving the clients attached to it while the two other sentinels promote a replica. Needs root, {@code ip}
 * and {@code nft} ({@link MemberNetwork#unavailableReason()}).
 */
public final class RedisSentinelSet implements AutoCloseable {

    /** The name the sentinels monitor the primary by. */
    public static final String MASTER_NAME = "mymaster";
    /** How long {@link #start()} waits for the sentinels to know the whole deployment. */
    public static final int DISCOVERY_TIMEOUT_SECONDS = 30;

    private static final int REPLICAS = 2;
    private static final int SENTINELS = 3;
    private static final int QUORUM = 2;
    /** How long one sentinel is given to answer a question: a frozen one answers nothing. */
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(1);

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** A data server's port in its namespace, in {@link #startNetworked()}. */
    public static final int NETWORKED_PORT = 6379;
    /** A sentinel's port in its namespace, in {@link #startNetworked()}. */
    public static final int NETWORKED_SENTINEL_PORT = 26379;

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<RedisServer> sentinels = new ArrayList<>();
    /** The namespaces the servers run in ({@link #startNetworked()}), or null on loopback. */
    private final MemberNetwork network;

    private boolean closed;

    private RedisSentinelSet(MemberNetwork network) {
        this.network = network;
    }

    /**
     * Starts a primary, two replicas (synced) and three sentinels, and waits until every sentinel knows the two
     * replicas and the two other sentinels.
     *
     * @return the running deployment; close it to stop it and delete its data
     * @throws IllegalStateException if {@code redis-server} is not installed (the message says how to install it),
     *     a process did not start, or the sentinels did not know the deployment within {@value
     *     #DISCOVERY_TIMEOUT_SECONDS} s; what was started is stopped
     */
    public static RedisSentinelSet start() {
        RedisSentinelSet set = new RedisSentinelSet(null);
        return LocalResources.startedOrClosed(set, set::startAll, set::close);
    }

    /**
     * Starts the deployment of {@link #start()} with each data server and a sentinel beside it in a network namespace
     * of their own (see the class comment), and waits as {@link #start()} does. The deployment owns the network:
     * {@link #close()} removes it after the processes exit.
     *
     * @return the running deployment; close it to stop it, delete its data and remove the namespaces
     * @throws IllegalStateException if namespaces cannot be made here (the message says why: root, {@code ip},
     *     {@code nft}), {@code redis-server} is not installed, a process did not start, or the sentinels did not know
     *     the deployment in time; what was started is stopped and the network removed
     */
    public static RedisSentinelSet startNetworked() {
        MemberNetwork net = MemberNetwork.create(1 + REPLICAS);
        RedisSentinelSet set = new RedisSentinelSet(net);
        return LocalResources.startedOrClosed(set, set::startAll, set::close);
    }

    private synchronized void startAll() {
        RedisServer primary = network == null ? RedisServer.start() : networkedDataServer(0, null);
        servers.add(primary);
        for (int i = 0; i < REPLICAS; i++) {
            servers.add(
                    network == null
                            ? RedisServer.startReplicaOf(primary)
                            : networkedDataServer(1 + i, primary.address()));
        }
        List<String> monitor = List.of(
                "sentinel monitor " + MASTER_NAME + " " + primary.host() + " " + primary.port() + " " + QUORUM,
                "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                "sentinel failover-timeout " + MASTER_NAME + " 3000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1");
        for (int i = 0; i < SENTINELS; i++) {
            if (network == null) {
                sentinels.add(RedisServer.startSentinel(monitor));
            } else {
                List<String> lines = new ArrayList<>(monitor);
                lines.add("sentinel announce-ip " + network.address(i));
                sentinels.add(RedisServer.startAt(
                        "Redis sentinel m" + i,
                        true,
                        false,
                        network.address(i),
                        NETWORKED_SENTINEL_PORT,
                        network.launcher(i),
                        RedisServer.sentinelConfig(network.address(i), lines)));
            }
        }
        awaitDiscovery();
    }

    /** Data server {@code i} in namespace {@code i}, a replica of {@code primary} unless it is null. */
    private RedisServer networkedDataServer(int i, RedisAddress primary) {
        return RedisServer.startAt(
                (primary == null ? "Redis server m" : "Redis replica m") + i,
                false,
                primary != null,
                network.address(i),
                NETWORKED_PORT,
                network.launcher(i),
                RedisServer.dataServerConfig(network.address(i), primary));
    }

    /**
     * @return the namespaces the data servers and sentinels run in (member {@code i}: data server {@code i} and
     *     sentinel {@code i}) when started with {@link #startNetworked()}, else empty
     */
    public Optional<MemberNetwork> network() {
        return Optional.ofNullable(network);
    }

    /** Waits until each sentinel reports {@code num-slaves} 2 and {@code num-other-sentinels} 2. */
    private void awaitDiscovery() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DISCOVERY_TIMEOUT_SECONDS);
        List<RedisServer> pending = new ArrayList<>(sentinels);
        Map<RedisServer, String> last = new LinkedHashMap<>();
        while (!pending.isEmpty()) {
            pending.removeIf(sentinel -> {
                try {
                    Map<String, String> master =
                            fields(sentinel.command(ASK_TIMEOUT, "SENTINEL", "MASTER", MASTER_NAME));
                    last.put(
                            sentinel,
                            master.get("num-slaves") + " replicas, " + master.get("num-other-sentinels")
                                    + " other sentinels, flags " + master.get("flags"));
                    return String.valueOf(REPLICAS).equals(master.get("num-slaves"))
                            && String.valueOf(SENTINELS - 1).equals(master.get("num-other-sentinels"));
                } catch (IllegalStateException e) {
                    last.put(sentinel, e.getMessage());
                    return false;
                }
            });
            if (pending.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the sentinels did not know the deployment within "
                        + DISCOVERY_TIMEOUT_SECONDS + " s: "
                        + pending.stream()
                                .map(s -> s.address() + " knows " + last.get(s) + "; log tail:\n" + s.logTail())
                                .collect(Collectors.joining("\n")));
            }
            LockSupport.parkNanos(POLL_NANOS); // sentinels announce what they learn on no channel a client can await
        }
    }

    /** {@code SENTINEL MASTER}'s flat list of names and values as a map. */
    private static Map<String, String> fields(Object reply) {
        List<?> list = (List<?>) reply;
        Map<String, String> fields = new HashMap<>();
        for (int i = 0; i + 1 < list.size(); i += 2) {
            fields.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
        }
        return fields;
    }

    /** @return {@value #MASTER_NAME} */
    public String masterName() {
        return MASTER_NAME;
    }

    /** @return the sentinels' addresses, in start order */
    public List<RedisAddress> sentinels() {
        return sentinelServers().stream().map(RedisServer::address).toList();
    }

    /**
     * @return the sentinels as processes, in start order, to kill, freeze or restart one (they answer {@code PING},
     *     {@code ROLE} and {@code SENTINEL ...}, not {@code CONFIG})
     */
    public synchronized List<RedisServer> sentinelServers() {
        return List.copyOf(sentinels);
    }

    /**
     * @return the URI a Lettuce client finds the primary with:
     *     {@code redis-sentinel://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>#mymaster} (networked: the sentinels'
     *     namespace addresses)
     */
    public String sentinelUri() {
        return "redis-sentinel://"
                + sentinels().stream().map(RedisAddress::toString).collect(Collectors.joining(",")) + "#"
                + MASTER_NAME;
    }

    /**
     * @return the three data servers, in start order (the first was the primary at start), whatever their roles now
     */
    public synchronized List<RedisServer> servers() {
        return List.copyOf(servers);
    }

    /**
     * The current primary as the sentinels name it ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}): the server a majority
     * of them names. A sentinel that does not answer within a second counts as naming none.
     *
     * @return the primary
     * @throws IllegalStateException if no majority of the sentinels names the same server
     */
    public RedisServer primary() {
        Map<RedisServer, String> named = named();
        RedisServer majority = majority(named);
        if (majority == null) {
            throw new IllegalStateException("no majority of the sentinels names a primary: " + describe(named));
        }
        return majority;
    }

    /**
     * Waits until a majority of the sentinels names a primary other than {@code old} and that server reports {@code
     * role:master}.
     *
     * @param old the primary before the failover (killed, frozen or cut off by the test)
     * @param timeout how long to wait; a failover after a kill takes a few seconds
     * @return the new primary
     * @throws IllegalStateException if that did not happen within {@code timeout} (the message says what each sentinel
     *     names and each server's role)
     */
    public RedisServer awaitFailover(RedisServer old, Duration timeout) {
        Objects.requireNonNull(old, "old");
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Map<RedisServer, String> named = named();
            RedisServer candidate = majority(named);
            if (candidate != null && candidate != old && "master".equals(roleOrNull(candidate))) {
                return candidate;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no failover from " + old.address() + " within " + timeout.toMillis()
                        + " ms: " + describe(named) + "; roles: "
                        + servers().stream()
                                .map(s -> s.address() + " " + roleOrNull(s))
                                .collect(Collectors.joining(", ")));
            }
            LockSupport.parkNanos(POLL_NANOS); // a poll of processes; +switch-master alone does not say the majority
        }
    }

    /** @return each sentinel's answer: the server it names, or null when it names none or one of no data server */
    private Map<RedisServer, String> named() {
        Map<RedisServer, String> named = new LinkedHashMap<>();
        for (RedisServer sentinel : sentinelServers()) {
            try {
                List<?> address =
                        (List<?>) sentinel.command(ASK_TIMEOUT, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                named.put(sentinel, address == null ? "none" : address.get(0) + ":" + address.get(1));
            } catch (IllegalStateException e) {
                named.put(sentinel, "no answer (" + e.getMessage() + ")");
            }
        }
        return named;
    }

    /** @return the data server a majority of the sentinels names, or null */
    private RedisServer majority(Map<RedisServer, String> named) {
        Map<String, Long> votes = named.values().stream().collect(Collectors.groupingBy(a -> a, Collectors.counting()));
        for (RedisServer server : servers()) {
            if (votes.getOrDefault(server.address().toString(), 0L) > SENTINELS / 2) {
                return server;
            }
        }
        return null;
    }

    private static String describe(Map<RedisServer, String> named) {
        return named.entrySet().stream()
                .map(e -> "sentinel " + e.getKey().address() + " names " + e.getValue())
                .collect(Collectors.joining(", "));
    }

    private static String roleOrNull(RedisServer server) {
        try {
            return String.valueOf(((List<?>) server.command(ASK_TIMEOUT, "ROLE")).get(0));
        } catch (IllegalStateException e) {
            return null;
        }
    }

    /**
     * Kills the sentinels, then the data servers, deletes their directories, and removes the network they ran in, if
     * any. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        IllegalStateException failure = new IllegalStateException("closing " + this + " failed");
        for (RedisServer sentinel : sentinels) {
            LocalResources.closeStep(sentinel::close, failure);
        }
        for (RedisServer server : servers) {
            LocalResources.closeStep(server::close, failure);
        }
        LocalResources.closeNetwork(null, network, failure);
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    @Override
    public synchronized String toString() {
        return "Redis " + MASTER_NAME + ": servers "
                + servers.stream().map(s -> s.address().toString()).collect(Collectors.joining(", "))
                + ", sentinels "
                + sentinels.stream().map(s -> s.address().toString()).collect(Collectors.joining(", "));
    }
}
