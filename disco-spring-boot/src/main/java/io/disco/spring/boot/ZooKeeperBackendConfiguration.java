package io.disco.spring.boot;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.core.SessionListener;
import io.disco.fencing.DiscoException;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.zookeeper.ZooKeeperIssuedBound;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.client.ZKClientConfig;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * disco on ZooKeeper, part of {@link DiscoAutoConfiguration}: with disco-provider-zookeeper and Curator on the class
 * path, when ZooKeeper is configured ({@link ConfiguredBackends}: {@code disco.zookeeper.connect-string}, or the
 * application's {@code CuratorFramework} bean) and not switched off ({@code disco.zookeeper.enabled=false}). An
 * application that configures another backend as well is refused at startup ({@link TwoBackendsException}). Every bean
 * backs off when the application defines its own of the same type:
 * <ul>
 *   <li>the {@link CuratorFramework} from {@code disco.zookeeper.*}: the connect string, the session timeout
 *       ({@code disco.zookeeper.session-timeout}, by default {@code disco.session.ttl}), the connection timeout,
 *       the authentication ({@code addAuthInfo}) and TLS (ZooKeeper's Netty socket with its key and trust store
 *       files); started here, closed by the context after everything that uses it. The application's own
 *       {@code CuratorFramework} bean is used instead, as it is: it must be started, and disco never closes it;</li>
 *   <li>the {@link ZooKeeperOptions} every session uses, with every {@link SessionListener} bean (the metrics);</li>
 *   <li>the {@link Disco} client ({@link ZooKeeperProvider#healingDisco}, or {@link ZooKeeperProvider#disco} with
 *       {@code disco.fail-fast=true}, its failure analysed by {@link DiscoStartupFailureAnalyzer});</li>
 *   <li>the guard's {@link IssuedBound}: {@link ZooKeeperIssuedBound} on the {@code CuratorFramework}.</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ZooKeeperProvider.class, CuratorFramework.class})
@ConditionalOnBooleanProperty(name = "disco.zookeeper.enabled", matchIfMissing = true)
@Conditional(OnBackendCondition.OnZooKeeper.class)
class ZooKeeperBackendConfiguration {

    /** The ZooKeeper client's socket that speaks TLS. */
    static final String NETTY_SOCKET = "org.apache.zookeeper.ClientCnxnSocketNetty";

    /** The client this configuration built, with its connect string, for a failed start to name it. */
    private record BuiltClient(CuratorFramework client, String connectString) {}

    /** The client {@link #discoCuratorFramework} built; null while it built none (the application defines its own). */
    private volatile BuiltClient built;

    /**
     * Refuses an application that configures another backend as well.
     *
     * @param environment the application's properties
     * @param beans the application's bean factory
     * @throws TwoBackendsException naming what configures each backend
     */
    ZooKeeperBackendConfiguration(Environment environment, ListableBeanFactory beans) {
        ConfiguredBackends.refuseTwo(environment, beans);
    }

    /**
     * @param properties {@code disco.zookeeper.*} and {@code disco.session.ttl}
     * @return the started client; the context closes it
     */
    @Bean
    @ConditionalOnMissingBean
    public CuratorFramework discoCuratorFramework(DiscoProperties properties) {
        DiscoProperties.ZooKeeper zk = properties.zookeeper();
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(zk.connectString())
                .sessionTimeoutMs(millis(sessionTimeout(properties)))
                .connectionTimeoutMs(millis(zk.connectionTimeout()))
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .zkClientConfig(clientConfig(zk.ssl()));
        if (zk.auth().scheme() != null) {
            builder.authorization(zk.auth().scheme(), zk.auth().credentials().getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = builder.build();
        client.start();
        built = new BuiltClient(client, zk.connectString());
        return client;
    }

    /** The session timeout the client asks for: {@code disco.zookeeper.session-timeout}, else {@code disco.session.ttl}. */
    static Duration sessionTimeout(DiscoProperties properties) {
        Duration timeout = properties.zookeeper().sessionTimeout();
        if (timeout != null) {
            return timeout;
        }
        Duration ttl = properties.session().ttl();
        if (ttl.compareTo(DiscoProperties.ZooKeeper.MAX_SESSION_TIMEOUT) > 0) {
            throw new IllegalArgumentException("disco.session.ttl (" + ttl + ") is the ZooKeeper session timeout"
                    + " unless disco.zookeeper.session-timeout is set, and must then be at most "
                    + DiscoProperties.ZooKeeper.MAX_SESSION_TIMEOUT);
        }
        return ttl;
    }

    /**
     * ZooKeeper's client configuration: with TLS, its Netty socket ({@code zookeeper.clientCnxnSocket}), secure
     * ({@code zookeeper.client.secure}), with the key and trust store files as ZooKeeper reads them
     * ({@code zookeeper.ssl.keyStore.*}, {@code zookeeper.ssl.trustStore.*}) and host name verification. Other
     * {@code zookeeper.*} system properties apply as ZooKeeper applies them.
     */
    static ZKClientConfig clientConfig(DiscoProperties.ZooKeeperSsl ssl) {
        ZKClientConfig config = new ZKClientConfig();
        if (!ssl.enabled()) {
            return config;
        }
        config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, NETTY_SOCKET);
        config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        config.setProperty("zookeeper.ssl.hostnameVerification", Boolean.toString(ssl.hostnameVerification()));
        store(config, "zookeeper.ssl.trustStore", ssl.trustStore());
        store(config, "zookeeper.ssl.keyStore", ssl.keyStore());
        return config;
    }

    private static void store(ZKClientConfig config, String prefix, DiscoProperties.ZooKeeperSsl.StoreFile store) {
        if (store.location() == null) {
            return;
        }
        config.setProperty(
                prefix + ".location", store.location().toAbsolutePath().toString());
        if (store.password() != null) {
            config.setProperty(prefix + ".password", store.password());
        }
        if (store.type() != null) {
            config.setProperty(prefix + ".type", store.type());
        }
    }

    private static int millis(Duration d) {
        return Math.toIntExact(d.toMillis());
    }

    /**
     * @param properties {@code disco.zookeeper.*}, {@code disco.session.*} and {@code disco.client-id}
     * @param listeners every session listener bean, in order (the metrics among them)
     * @return the options of every session of the client
     */
    @Bean
    @ConditionalOnMissingBean
    public ZooKeeperOptions discoZooKeeperOptions(
            DiscoProperties properties, ObjectProvider<SessionListener> listeners) {
        DiscoProperties.ZooKeeper zk = properties.zookeeper();
        Duration ownerWait = properties.session().ownerWait();
        ZooKeeperOptions.Builder builder = ZooKeeperOptions.builder()
                .connectTimeout(zk.connectionTimeout())
                .requestTimeout(zk.requestTimeout())
                .clientId(properties.clientId())
                .ownerWait(ownerWait != null ? ownerWait : sessionTimeout(properties));
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    /**
     * @param client the started ZooKeeper client: the starter's, or the application's own
     * @param options the sessions' options
     * @param properties {@code disco.fail-fast}
     * @return the client of this application; the context closes it (after {@link DiscoLifecycle} did), and it
     *     never closes {@code client}
     * @throws IllegalStateException if {@code client} is not started; with {@code disco.fail-fast=true}, if the
     *     client could not open its first session in time: the provider's {@code DiscoException} (naming the connect
     *     string and the cause) is its cause, and Boot's failure analysis reports it
     */
    @Bean
    @ConditionalOnMissingBean
    public Disco disco(
            CuratorFramework client,
            ZooKeeperOptions options,
            DiscoProperties properties,
            ObjectProvider<AcquisitionObserver> observers) {
        DiscoOptions clientOptions = DiscoAutoConfiguration.clientOptions(observers);
        if (!properties.failFast()) {
            return ZooKeeperProvider.healingDisco(client, options, clientOptions);
        }
        try {
            return ZooKeeperProvider.disco(client, options, clientOptions);
        } catch (DiscoException e) {
            BuiltClient ours = built;
            throw new DiscoStartupException(
                    DiscoStartupException.Backend.ZOOKEEPER,
                    ours != null && ours.client() == client ? List.of(ours.connectString()) : List.of(),
                    e);
        }
    }

    /** The guard's bound on ZooKeeper: the zxid of a write, through the {@code CuratorFramework}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(IssuedBound.class)
    static class Bound {

        @Bean
        @ConditionalOnMissingBean
        IssuedBound discoIssuedBound(CuratorFramework client) {
            return ZooKeeperIssuedBound.of(client);
        }
    }
}
