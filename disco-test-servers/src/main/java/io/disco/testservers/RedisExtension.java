package io.disco.testservers;

import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that runs one Redis deployment for every class of the test run that registers it: the first
 * class starts it, every later one uses it, and it stops when the run ends (JUnit's root store). One of each kind:
 *
 * <ul>
 *   <li>{@link #sharedServer()}: a standalone {@link RedisServer};
 *   <li>{@link #sharedSentinels()}: a {@link RedisSentinelSet}, a primary, two replicas and three sentinels;
 *   <li>{@link #sharedCluster()}: a {@link RedisClusterSet} of three primaries.
 * </ul>
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension REDIS = RedisExtension.sharedServer();
 * ... RedisClient.create(REDIS.uri())
 * }</pre>
 *
 * <p>Tests on a shared deployment use keys of their own and never stop, kill, freeze or reconfigure it: a test that
 * does starts its own with {@link RedisServer#start()}. Without {@code redis-server} the class fails with an {@link
 * IllegalStateException} that says how to install it; it never skips.
 */
public final class RedisExtension implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(RedisExtension.class, "shared");

    /** What a shared deployment is: its key in the root store, and how to start it. */
    private enum Kind {
        SERVER(RedisServer::start),
        SENTINELS(RedisSentinelSet::start),
        CLUSTER(RedisClusterSet::start);

        final Supplier<AutoCloseable> start;

        Kind(Supplier<AutoCloseable> start) {
            this.start = start;
        }
    }

    private final Kind kind;
    private volatile Object running;

    private RedisExtension(Kind kind) {
        this.kind = kind;
    }

    /**
     * Returns an extension on the standalone server shared by the whole test run.
     *
     * @return a new extension
     */
    public static RedisExtension sharedServer() {
        return new RedisExtension(Kind.SERVER);
    }

    /**
     * Returns an extension on the Sentinel-managed deployment shared by the whole test run.
     *
     * @return a new extension
     */
    public static RedisExtension sharedSentinels() {
        return new RedisExtension(Kind.SENTINELS);
    }

    /**
     * Returns an extension on the cluster shared by the whole test run.
     *
     * @return a new extension
     */
    public static RedisExtension sharedCluster() {
        return new RedisExtension(Kind.CLUSTER);
    }

    /**
     * Starts the shared deployment unless an earlier class did.
     *
     * @param context the JUnit context of the test class
     * @throws IllegalStateException if Redis is not installed (the message says how to install it) or did not start
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        running = context.getRoot()
                .getStore(SHARED)
                .computeIfAbsent(kind, k -> new Shared(kind.start.get()), Shared.class)
                .deployment;
    }

    /**
     * The URI a Lettuce client connects with: {@code redis://127.0.0.1:<port>} for the standalone server, {@link
     * RedisSentinelSet#sentinelUri()} ({@code redis-sentinel://...#mymaster}) for the sentinels, and {@link
     * RedisClusterSet#uri()} (a seed node's {@code redis://127.0.0.1:<port>}) for the cluster.
     *
     * @return the URI
     * @throws IllegalStateException before {@code beforeAll}
     */
    public String uri() {
        Object current = running();
        if (current instanceof RedisServer server) {
            return server.uri();
        }
        if (current instanceof RedisSentinelSet sentinels) {
            return sentinels.sentinelUri();
        }
        return ((RedisClusterSet) current).uri();
    }

    /**
     * @return the shared standalone server
     * @throws IllegalStateException if this extension is not {@link #sharedServer()}, or before {@code beforeAll}
     */
    public RedisServer server() {
        return as(RedisServer.class, "sharedServer()");
    }

    /**
     * @return the shared Sentinel-managed deployment
     * @throws IllegalStateException if this extension is not {@link #sharedSentinels()}, or before {@code beforeAll}
     */
    public RedisSentinelSet sentinels() {
        return as(RedisSentinelSet.class, "sharedSentinels()");
    }

    /**
     * @return the shared cluster
     * @throws IllegalStateException if this extension is not {@link #sharedCluster()}, or before {@code beforeAll}
     */
    public RedisClusterSet cluster() {
        return as(RedisClusterSet.class, "sharedCluster()");
    }

    private <T> T as(Class<T> type, String factory) {
        Object current = running();
        if (!type.isInstance(current)) {
            throw new IllegalStateException("this extension runs " + current + ", not a " + type.getSimpleName()
                    + ": register RedisExtension." + factory);
        }
        return type.cast(current);
    }

    private Object running() {
        Object current = running;
        if (current == null) {
            throw new IllegalStateException("Redis is not running: register RedisExtension on a static field with"
                    + " @RegisterExtension and use it from tests of that class");
        }
        return current;
    }

    /** A running deployment; closed by JUnit when the run ends (the root store closes its {@code AutoCloseable}s). */
    private static final class Shared implements AutoCloseable {

        final AutoCloseable deployment;

        Shared(AutoCloseable deployment) {
            this.deployment = deployment;
        }

        @Override
        public void close() throws Exception {
            deployment.close();
        }

        @Override
        public String toString() {
            return deployment.toString();
        }
    }
}
