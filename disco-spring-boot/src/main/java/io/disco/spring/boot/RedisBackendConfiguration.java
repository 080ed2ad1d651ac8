package io.disco.spring.boot;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.core.SessionListener;
import io.disco.fencing.DiscoException;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.redis.RedisProvider;
import io.disco.provider.redis.UnsafeTokenException;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * disco on Redis, part of {@link DiscoAutoConfiguration}: with disco-provider-redis, Lettuce and Spring Boot's Redis
 * auto-configuration (spring-boot-data-redis) on the class path, unless {@code disco.redis.enabled=false}, when Redis
 * is disco's backend ({@link ConfiguredBackends}): the application has Spring Boot's Redis connection (a
 * {@link DataRedisConnectionDetails} bean: {@code spring.data.redis.*}, or a service connection) and configures
 * neither etcd nor ZooKeeper, or it sets a {@code disco.redis.*} property. An application that configures another
 * backend as well through disco's own properties or beans is refused at startup ({@link TwoBackendsException}); one
 * whose Redis is only a cache beside {@code disco.etcd.endpoints} stays on etcd. Every bean backs off when the
 * application defines its own of the same type:
 * <ul>
 *   <li>the Lettuce client, from the connection details: a {@link RedisClient} for a standalone server (host, port,
 *       database) or a Sentinel-managed master (the master's name, the sentinels and their credentials), a
 *       {@link RedisClusterClient} for a cluster (its nodes); the username and password, TLS with the details' SSL
 *       bundle (or a {@code rediss://} URL: the JVM's trust store), Boot's client name; on Boot's
 *       {@link ClientResources} bean when there is one (the event loops Spring Data Redis uses). The context shuts
 *       it down after the {@link Disco} client closed. An application's own {@code RedisClient} or
 *       {@code RedisClusterClient} bean is used instead, as it is (a {@code RedisClient} with the details' server or
 *       sentinels), and never shut down by disco;</li>
 *   <li>the {@link RedisOptions} every session uses: {@code disco.session.ttl} and {@code owner-wait},
 *       {@code disco.client-id}, {@code disco.redis.*}, every {@link SessionListener} bean (the metrics);</li>
 *   <li>the {@link Disco} client ({@link RedisProvider#healingDisco}, or {@link RedisProvider#disco} with
 *       {@code disco.fail-fast=true}, its failure analysed by {@link DiscoStartupFailureAnalyzer}). Whatever
 *       {@code disco.fail-fast}, a server whose settings would not keep tokens safe (the provider's start check:
 *       {@code appendonly yes} with {@code appendfsync always}, no {@code allkeys-*} eviction) fails startup, naming
 *       the setting and the property that opts out.</li>
 * </ul>
 * There is no guard's issued bound on Redis: the guards' {@code issued-bound} has nothing to read there.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedisProvider.class, RedisClient.class, DataRedisConnectionDetails.class})
@ConditionalOnBooleanProperty(name = "disco.redis.enabled", matchIfMissing = true)
@Conditional(OnBackendCondition.OnRedis.class)
class RedisBackendConfiguration {

    /** Where disco connects, from Boot's connection details. */
    enum Kind {
        /** One server. */
        STANDALONE,
        /** The master a set of sentinels names. */
        SENTINEL,
        /** A Redis Cluster. */
        CLUSTER
    }

    /**
     * Where disco connects, from Boot's connection details.
     *
     * @param kind standalone, Sentinel or Cluster
     * @param uri the server's or the sentinels' URI; null for a cluster
     * @param clusterNodes a cluster's nodes; empty otherwise
     * @param ssl the SSL bundle of the connection, null for plaintext
     * @param describe the endpoints as the startup report names them
     */
    record Target(Kind kind, RedisURI uri, List<RedisURI> clusterNodes, SslBundle ssl, List<String> describe) {}

    /** The client this configuration built, for a failed start to name its endpoints. */
    private volatile AbstractRedisClient built;

    /**
     * Refuses an application that configures another backend as well.
     *
     * @param environment the application's properties
     * @param beans the application's bean factory
     * @throws TwoBackendsException naming what configures each
     */
    RedisBackendConfiguration(Environment environment, ListableBeanFactory beans) {
        ConfiguredBackends.refuseTwo(environment, beans);
    }

    /**
     * @param details Boot's Redis connection details
     * @param bootProperties {@code spring.data.redis.*}, for its URL's scheme and the client name, when Boot's
     *     auto-configuration made the details
     * @return where disco connects
     * @throws IllegalStateException without connection details, or for static master/replica nodes
     */
    static Target target(
            ObjectProvider<DataRedisConnectionDetails> details, ObjectProvider<DataRedisProperties> bootProperties) {
        DataRedisConnectionDetails connection = details.getIfUnique();
        if (connection == null) {
            throw new IllegalStateException(
                    "disco runs on Redis (disco.redis.* is set) but the application has no Redis"
                            + " connection: add spring-boot-starter-data-redis and set spring.data.redis.* (host, port, ...),"
                            + " or set disco.redis.enabled=false");
        }
        DataRedisProperties boot = bootProperties.getIfUnique();
        SslBundle ssl = connection.getSslBundle();
        if (ssl == null
                && boot != null
                && boot.getUrl() != null
                && boot.getUrl().startsWith("rediss://")) {
            ssl = SslBundle.systemDefault();
        }
        String clientName = boot != null ? boot.getClientName() : null;
        DataRedisConnectionDetails.Sentinel sentinel = connection.getSentinel();
        if (sentinel != null) {
            RedisURI.Builder uri = RedisURI.builder().withSentinelMasterId(sentinel.getMaster());
            for (DataRedisConnectionDetails.Node node : sentinel.getNodes()) {
                RedisURI.Builder s = RedisURI.builder().withHost(node.host()).withPort(node.port());
                credentials(s, sentinel.getUsername(), sentinel.getPassword());
                uri.withSentinel(s.withSsl(ssl != null).build());
            }
            credentials(uri, connection.getUsername(), connection.getPassword());
            uri.withDatabase(sentinel.getDatabase()).withSsl(ssl != null);
            if (clientName != null) {
                uri.withClientName(clientName);
            }
            return new Target(
                    Kind.SENTINEL,
                    uri.build(),
                    List.of(),
                    ssl,
                    List.of("master '" + sentinel.getMaster() + "' of the sentinels " + nodes(sentinel.getNodes())));
        }
        DataRedisConnectionDetails.Cluster cluster = connection.getCluster();
        if (cluster != null) {
            List<RedisURI> nodes = new ArrayList<>();
            for (DataRedisConnectionDetails.Node node : cluster.getNodes()) {
                RedisURI.Builder n = RedisURI.builder().withHost(node.host()).withPort(node.port());
                credentials(n, connection.getUsername(), connection.getPassword());
                if (clientName != null) {
                    n.withClientName(clientName);
                }
                nodes.add(n.withSsl(ssl != null).build());
            }
            return new Target(
                    Kind.CLUSTER,
                    null,
                    List.copyOf(nodes),
                    ssl,
                    List.of("the cluster at " + nodes(cluster.getNodes())));
        }
        if (connection.getMasterReplica() != null) {
            throw new IllegalStateException("disco cannot run on static master/replica nodes"
                    + " (spring.data.redis.masterreplica.nodes "
                    + nodes(connection.getMasterReplica().getNodes())
                    + "): it runs on a standalone server, a Sentinel-managed master or a Redis Cluster, where it can"
                    + " tell a promoted replica's tokens from the old primary's. Set disco.redis.enabled=false to"
                    + " keep this connection to other uses");
        }
        DataRedisConnectionDetails.Standalone standalone = connection.getStandalone();
        RedisURI.Builder uri = RedisURI.builder()
                .withHost(standalone.getHost())
                .withPort(standalone.getPort())
                .withDatabase(standalone.getDatabase())
                .withSsl(ssl != null);
        credentials(uri, connection.getUsername(), connection.getPassword());
        if (clientName != null) {
            uri.withClientName(clientName);
        }
        return new Target(
                Kind.STANDALONE,
                uri.build(),
                List.of(),
                ssl,
                List.of(standalone.getHost() + ":" + standalone.getPort()
                        + (standalone.getDatabase() != 0 ? " (database " + standalone.getDatabase() + ")" : "")));
    }

    private static void credentials(RedisURI.Builder uri, String username, String password) {
        if (password == null) {
            return;
        }
        if (username != null) {
            uri.withAuthentication(username, password.toCharArray());
        } else {
            uri.withPassword(password.toCharArray());
        }
    }

    private static String nodes(List<DataRedisConnectionDetails.Node> nodes) {
        return nodes.stream().map(n -> n.host() + ":" + n.port()).collect(Collectors.joining(", "));
    }

    /**
     * @param details Boot's Redis connection details
     * @param bootProperties {@code spring.data.redis.*}, when Boot's auto-configuration made the details
     * @param resources Boot's Lettuce client resources, if the application has them (shared, not shut down here)
     * @param properties {@code disco.redis.connect-timeout}
     * @return a {@link RedisClient}, or a {@link RedisClusterClient} for a cluster; the context shuts it down
     */
    @Bean(destroyMethod = "shutdown")
    @ConditionalOnMissingBean
    public AbstractRedisClient discoRedisClient(
            ObjectProvider<DataRedisConnectionDetails> details,
            ObjectProvider<DataRedisProperties> bootProperties,
            ObjectProvider<ClientResources> resources,
            DiscoProperties properties) {
        Target target = target(details, bootProperties);
        ClientResources shared = resources.getIfUnique();
        ClientOptions.Builder options = ClientOptions.builder()
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(properties.redis().connectTimeout())
                        .build());
        if (target.ssl() != null) {
            options.sslOptions(sslOptions(target.ssl()));
        }
        AbstractRedisClient client;
        if (target.kind() == Kind.CLUSTER) {
            RedisClusterClient cluster = shared != null
                    ? RedisClusterClient.create(shared, target.clusterNodes())
                    : RedisClusterClient.create(target.clusterNodes());
            cluster.setOptions(ClusterClientOptions.builder(options.build()).build());
            client = cluster;
        } else {
            RedisClient single = shared != null ? RedisClient.create(shared) : RedisClient.create();
            single.setOptions(options.build());
            client = single;
        }
        built = client;
        return client;
    }

    /** Lettuce's TLS options from a Spring Boot SSL bundle, as Spring Boot's own Lettuce configuration makes them. */
    private static SslOptions sslOptions(SslBundle bundle) {
        SslOptions.Builder ssl = SslOptions.builder().jdkSslProvider();
        if (bundle.getStores().getKeyStore() != null) {
            ssl.keyManager(bundle.getManagers().getKeyManagerFactory());
        }
        ssl.trustManager(bundle.getManagers().getTrustManagerFactory());
        org.springframework.boot.ssl.SslOptions options = bundle.getOptions();
        if (options.getCiphers() != null) {
            ssl.cipherSuites(options.getCiphers());
        }
        if (options.getEnabledProtocols() != null) {
            ssl.protocols(options.getEnabledProtocols());
        }
        return ssl.build();
    }

    /**
     * @param properties {@code disco.session.*}, {@code disco.client-id} and {@code disco.redis.*}
     * @param listeners every session listener bean, in order (the metrics among them)
     * @return the options of every session of the client
     * @throws IllegalArgumentException if {@code disco.session.ttl} is longer than Redis's longest TTL (1 h), or the
     *     grant acknowledgement timeout is not shorter than it
     */
    @Bean
    @ConditionalOnMissingBean
    public RedisOptions discoRedisOptions(DiscoProperties properties, ObjectProvider<SessionListener> listeners) {
        DiscoProperties.Session session = properties.session();
        DiscoProperties.Redis redis = properties.redis();
        if (session.ttl().compareTo(DiscoProperties.Redis.MAX_TTL) > 0) {
            throw new IllegalArgumentException(
                    "disco.session.ttl (" + session.ttl() + ") is the Redis session's time to"
                            + " live and must be at most " + DiscoProperties.Redis.MAX_TTL + " on Redis");
        }
        RedisOptions.Builder builder = RedisOptions.builder()
                .ttl(session.ttl())
                .connectTimeout(redis.connectTimeout())
                .requestTimeout(redis.requestTimeout())
                .clientId(properties.clientId());
        if (redis.replicaAcks() != null) {
            builder.replicaAcks(redis.replicaAcks());
        }
        if (redis.grantAckTimeout() != null) {
            if (redis.grantAckTimeout().compareTo(session.ttl()) >= 0) {
                throw new IllegalArgumentException("disco.redis.grant-ack-timeout (" + redis.grantAckTimeout()
                        + ") must be shorter than disco.session.ttl (" + session.ttl() + ")");
            }
            builder.grantAckTimeout(redis.grantAckTimeout());
        }
        if (session.ownerWait() != null) {
            builder.ownerWait(session.ownerWait());
        }
        if (redis.unsafeWithoutDurableTokens()) {
            builder.unsafeWithoutDurableTokens();
        }
        if (redis.persistenceCheckedElsewhere()) {
            builder.persistenceCheckedElsewhere();
        }
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    /**
     * @param clients the Lettuce client: the starter's, or the application's own
     * @param details Boot's Redis connection details: the server or sentinels a {@code RedisClient} connects to
     * @param bootProperties {@code spring.data.redis.*}, when Boot's auto-configuration made the details
     * @param options the sessions' options
     * @param properties {@code disco.fail-fast}
     * @param observers every acquisition observer bean, in order
     * @return the client of this application; the context closes it (after {@link DiscoLifecycle} did), before the
     *     Lettuce client
     * @throws IllegalStateException if the application has several Lettuce clients and none is primary, or a
     *     {@code RedisClient} for a cluster's details; if Redis refuses the client for settings that would not keep
     *     tokens safe (whatever {@code disco.fail-fast}); with {@code disco.fail-fast=true}, if the client could not
     *     open its first session in time: the provider's {@code DiscoException} (naming the endpoints and the cause)
     *     is its cause, and Boot's failure analysis reports it
     */
    @Bean
    @ConditionalOnMissingBean
    public Disco disco(
            ObjectProvider<AbstractRedisClient> clients,
            ObjectProvider<DataRedisConnectionDetails> details,
            ObjectProvider<DataRedisProperties> bootProperties,
            RedisOptions options,
            DiscoProperties properties,
            ObjectProvider<AcquisitionObserver> observers) {
        AbstractRedisClient client = clients.getIfUnique();
        if (client == null) {
            throw new IllegalStateException("the application has several Lettuce clients ("
                    + clients.stream().map(c -> c.getClass().getSimpleName()).collect(Collectors.joining(", "))
                    + "): mark the one disco is to use @Primary");
        }
        DiscoOptions clientOptions = DiscoAutoConfiguration.clientOptions(observers);
        Supplier<Disco> strict;
        Supplier<Disco> healing;
        List<String> endpoints;
        if (client instanceof RedisClusterClient cluster) {
            strict = () -> RedisProvider.disco(cluster, options, clientOptions);
            healing = () -> RedisProvider.healingDisco(cluster, options, clientOptions);
            endpoints = client == built ? target(details, bootProperties).describe() : List.of();
        } else if (client instanceof RedisClient single) {
            Target target = target(details, bootProperties);
            if (target.kind() == Kind.CLUSTER) {
                throw new IllegalStateException("disco's Redis connection is a cluster ("
                        + String.join(", ", target.describe()) + "), but the application's Lettuce client is a"
                        + " RedisClient, which reaches one server: define a RedisClusterClient bean, or none (the"
                        + " starter then builds one)");
            }
            strict = () -> RedisProvider.disco(single, target.uri(), options, clientOptions);
            healing = () -> RedisProvider.healingDisco(single, target.uri(), options, clientOptions);
            endpoints = target.describe();
        } else {
            throw new IllegalStateException("the application's Lettuce client "
                    + client.getClass().getName() + " is neither a RedisClient nor a RedisClusterClient");
        }
        // Strict first, so that a refusal (the server's settings would not keep tokens safe) fails startup whatever
        // disco.fail-fast; only a server not reached lets the client start healing.
        try {
            return strict.get();
        } catch (UnsafeTokenException e) {
            throw new DiscoStartupException(DiscoStartupException.Backend.REDIS, endpoints, e, true);
        } catch (DiscoException e) {
            if (properties.failFast()) {
                throw new DiscoStartupException(DiscoStartupException.Backend.REDIS, endpoints, e);
            }
            return healing.get();
        }
    }
}
