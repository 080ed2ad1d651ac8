package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnreachableClient;
import io.disco.core.SessionListener;
import io.disco.testservers.RedisExtension;
import io.disco.testservers.TcpProxy;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The Redis backend of the contract kit: a {@link RedisDiscoBackend} on one Lettuce client per run, over a deployment
 * of {@link RedisExtension} (the standalone server by default; {@link #sentinels()} and {@link #cluster()} for the
 * others), plus the kit's clients whose link to the server a {@link TcpProxy} can stall or cut (standalone only).
 * Every contract class of the run shares one deployment, one Lettuce client and one backend.
 */
final class RedisContractBackend implements BeforeAllCallback {

    private static final ExtensionContext.Namespace SHARED =
            ExtensionContext.Namespace.create(RedisContractBackend.class);

    private final RedisExtension redis;
    private final String kind;
    private volatile RedisDiscoBackend backend;
    private volatile Resources resources;
    private volatile ExtensionContext.Store runStore;

    private RedisContractBackend(RedisExtension redis, String kind) {
        this.redis = redis;
        this.kind = kind;
    }

    /** On the run's shared standalone server. */
    RedisContractBackend() {
        this(RedisExtension.sharedServer(), "standalone");
    }

    /** On the run's shared Sentinel deployment (a primary, two replicas, three sentinels). */
    static RedisContractBackend sentinels() {
        return new RedisContractBackend(RedisExtension.sharedSentinels(), "sentinel");
    }

    /** On the run's shared 3-primary cluster. */
    static RedisContractBackend cluster() {
        return new RedisContractBackend(RedisExtension.sharedCluster(), "cluster");
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        redis.beforeAll(context);
        runStore = context.getRoot().getStore(SHARED);
        resources = runStore.computeIfAbsent("resources-" + kind, k -> new Resources(redis, kind), Resources.class);
        backend = resources.backend;
    }

    TestableBackend backend() {
        return backend;
    }

    RedisDiscoBackend redisBackend() {
        return backend;
    }

    RedisExtension redis() {
        return redis;
    }

    static RedisOptions options() {
        return RedisOptions.builder()
                .ttl(Duration.ofSeconds(30))
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(10))
                .build();
    }

    /** @return a backend like {@link #backend()} whose owners tell {@code listener} of their events */
    TestableBackend listening(SessionListener listener) {
        return resources.over(options().toBuilder().listener(listener).build());
    }

    /** A client whose link to the server a proxy stalls (nothing passes, nothing is lost) and resumes. */
    StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        TcpProxy proxy = proxyForTheRun();
        RedisOptions options = options().toBuilder()
                .ttl(ttl)
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(requestTimeout)
                .build();
        return new StallableClient(resources.overProxy(proxy, options), link(proxy));
    }

    /** A client whose link to the server a proxy cuts for as long as the test likes. */
    UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        TcpProxy proxy = proxyForTheRun();
        RedisOptions options = options().toBuilder()
                .ttl(ttl)
                .connectTimeout(requestTimeout)
                .requestTimeout(requestTimeout)
                .ownerWait(ownerWait)
                .build();
        return new UnreachableClient(resources.overProxy(proxy, options), "127.0.0.1:" + proxy.port(), link(proxy));
    }

    private TcpProxy proxyForTheRun() {
        TcpProxy proxy;
        try {
            proxy = new TcpProxy(
                    new InetSocketAddress("127.0.0.1", redis.server().port()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        runStore.put(UUID.randomUUID(), (AutoCloseable) proxy::close);
        return proxy;
    }

    private static StallableClient.Link link(TcpProxy proxy) {
        return new StallableClient.Link() {
            @Override
            public void stall() {
                proxy.blackhole(true);
            }

            @Override
            public void resume() {
                proxy.blackhole(false);
            }
        };
    }

    /** The run's Lettuce client and backend for one deployment, closed when the run ends. */
    static final class Resources implements AutoCloseable {
        final RedisClient client;
        final RedisClusterClient clusterClient;
        final RedisURI uri;
        final RedisDiscoBackend backend;

        Resources(RedisExtension redis, String kind) {
            uri = RedisURI.create(redis.uri());
            if ("cluster".equals(kind)) {
                client = null;
                clusterClient = RedisClusterClient.create(uri);
                clusterClient.setOptions(ClusterClientOptions.builder()
                        .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(30)))
                        .build());
                // the shared cluster has no replicas: a grant that waited for one would fail closed, as it must
                backend = RedisDiscoBackend.over(clusterClient, noReplicas(options()));
            } else {
                clusterClient = null;
                client = RedisClient.create();
                client.setOptions(ClientOptions.builder()
                        .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(30)))
                        .build());
                backend = RedisDiscoBackend.over(client, uri, options());
            }
        }

        RedisDiscoBackend over(RedisOptions options) {
            return clusterClient != null
                    ? RedisDiscoBackend.over(clusterClient, noReplicas(options))
                    : RedisDiscoBackend.over(client, uri, options);
        }

        private static RedisOptions noReplicas(RedisOptions options) {
            return options.toBuilder().replicaAcks(0).build();
        }

        RedisDiscoBackend overProxy(TcpProxy proxy, RedisOptions options) {
            return RedisDiscoBackend.over(client, RedisURI.create("redis://127.0.0.1:" + proxy.port()), options);
        }

        @Override
        public void close() {
            backend.close();
            if (client != null) {
                client.shutdown();
            } else {
                clusterClient.shutdown();
            }
        }
    }
}
