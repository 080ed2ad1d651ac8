package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.disco.provider.redis.Link.Grantor;
import io.disco.provider.redis.Link.Node;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The Redis deployment a provider runs on, and how to open a session's connections to it ({@link Link}): a
 * standalone server or a Sentinel-managed primary (a {@code RedisClient} and its {@code RedisURI}, which names the
 * sentinels and the master), or a Redis Cluster (a {@code RedisClusterClient}). The Lettuce clients are the
 * application's: this opens and closes only its own connections.
 */
abstract sealed class Deployment {

    /** What kind of deployment. */
    enum Kind {
        STANDALONE,
        SENTINEL,
        CLUSTER
    }

    abstract Kind kind();

    /** @return the endpoints, for messages: {@code redis at 127.0.0.1:6379} */
    abstract String describe();

    /**
     * Opens a session's connections, each within {@code timeout}.
     *
     * @throws DiscoException if Redis could not be reached in time, naming the endpoints and why
     */
    abstract Link connect(Duration timeout);

    /** @return the replica acknowledgements a grant needs by default: 0 standalone, 1 under Sentinel and Cluster */
    final int defaultAcks() {
        return kind() == Kind.STANDALONE ? 0 : 1;
    }

    static Deployment of(RedisClient client, RedisURI uri) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(uri, "uri");
        return new Single(client, uri);
    }

    static Deployment of(RedisClusterClient client) {
        return new Cluster(Objects.requireNonNull(client, "client"));
    }

    /** Waits for a connection, at most {@code timeout}; fails saying where and why. */
    static <T> T await(CompletableFuture<T> f, Duration timeout, String where) {
        try {
            return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            f.cancel(false);
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while connecting to " + where, e);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new DiscoException(
                    where + " could not be reached: no connection within " + timeout.toMillis() + " ms", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw new DiscoException(where + " could not be reached: " + cause, cause);
        }
    }

    /** A standalone server, or the primary a set of sentinels names (the URI's sentinels and master id). */
    static final class Single extends Deployment {
        final RedisClient client;
        final RedisURI uri;

        Single(RedisClient client, RedisURI uri) {
            this.client = client;
            this.uri = uri;
        }

        @Override
        Kind kind() {
            return uri.getSentinels().isEmpty() ? Kind.STANDALONE : Kind.SENTINEL;
        }

        @Override
        String describe() {
            if (kind() == Kind.SENTINEL) {
                return "redis master '" + uri.getSentinelMasterId() + "' of the sentinels at "
                        + uri.getSentinels().stream()
                                .map(s -> s.getHost() + ":" + s.getPort())
                                .collect(Collectors.joining(","));
            }
            return "redis at " + uri.getHost() + ":" + uri.getPort();
        }

        @Override
        Link connect(Duration timeout) {
            String where = describe();
            StatefulRedisConnection<String, String> main =
                    await(client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture(), timeout, where);
            try {
                StatefulRedisPubSubConnection<String, String> pubsub =
                        await(client.connectPubSubAsync(StringCodec.UTF8, uri).toCompletableFuture(), timeout, where);
                return new Link(main.async(), pubsub, main::closeAsync) {
                    @Override
                    Grantor newGrantor(Duration t) {
                        StatefulRedisConnection<String, String> c =
                                await(client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture(), t, where);
                        return new Grantor(name -> new Node("", c.async()), c::closeAsync);
                    }

                    @Override
                    List<Node> primaries() {
                        return List.of(new Node("", main.async()));
                    }
                };
            } catch (RuntimeException e) {
                main.closeAsync();
                throw e;
            }
        }

        /** @return the sentinels' URIs (with the master id), empty for a standalone server */
        List<RedisURI> sentinels() {
            return uri.getSentinels();
        }
    }

    /** A Redis Cluster: every name's keys in one slot, scripts routed to its primary. */
    static final class Cluster extends Deployment {
        final RedisClusterClient client;

        Cluster(RedisClusterClient client) {
            this.client = client;
        }

        @Override
        Kind kind() {
            return Kind.CLUSTER;
        }

        @Override
        String describe() {
            StringBuilder b = new StringBuilder("redis cluster at ");
            try {
                client.getPartitions()
                        .forEach(n -> b.append(n.getUri().getHost())
                                .append(':')
                                .append(n.getUri().getPort())
                                .append(','));
                b.setLength(b.length() - 1);
            } catch (RuntimeException e) {
                b.append("(topology not loaded yet)");
            }
            return b.toString();
        }

        @Override
        Link connect(Duration timeout) {
            String where = "redis cluster";
            StatefulRedisClusterConnection<String, String> main =
                    await(client.connectAsync(StringCodec.UTF8), timeout, where);
            try {
                StatefulRedisPubSubConnection<String, String> pubsub =
                        await(client.connectPubSubAsync(StringCodec.UTF8), timeout, where);
                return new Link(main.async(), pubsub, main::closeAsync) {
                    @Override
                    Grantor newGrantor(Duration t) {
                        StatefulRedisClusterConnection<String, String> c =
                                await(client.connectAsync(StringCodec.UTF8), t, where);
                        return new Grantor(
                                name -> {
                                    int slot = SlotHash.getSlot(RedisKeys.tokens(name));
                                    RedisClusterNode node = c.getPartitions().getMasterBySlot(slot);
                                    if (node == null) {
                                        throw new DiscoException("no primary serves slot " + slot + " of " + name);
                                    }
                                    return new Node(
                                            node.getNodeId(),
                                            c.getConnection(node.getNodeId()).async());
                                },
                                c::closeAsync);
                    }

                    @Override
                    List<Node> primaries() {
                        List<Node> nodes = new ArrayList<>();
                        for (RedisClusterNode n : main.getPartitions()) {
                            if (n.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                                nodes.add(new Node(
                                        n.getNodeId(),
                                        main.getConnection(n.getNodeId()).async()));
                            }
                        }
                        return nodes;
                    }
                };
            } catch (RuntimeException e) {
                main.closeAsync();
                throw e;
            }
        }
    }
}
