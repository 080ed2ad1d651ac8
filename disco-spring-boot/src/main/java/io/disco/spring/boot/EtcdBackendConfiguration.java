package io.disco.spring.boot;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.core.SessionListener;
import io.disco.fencing.DiscoException;
import io.disco.fencing.guard.IssuedBound;
import io.disco.provider.etcd.EtcdClients;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.net.ssl.SSLException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;

/**
 * disco on etcd, part of {@link DiscoAutoConfiguration}: with disco-provider-etcd and jetcd on the class path,
 * unless {@code disco.etcd.enabled=false}, when etcd is configured ({@code disco.etcd.endpoints}, the application's
 * jetcd {@code Client} or {@link EtcdConnectionDetails} bean), or when nothing is: neither ZooKeeper nor Redis
 * ({@link ConfiguredBackends}); its endpoints then default to {@code http://127.0.0.1:2379}. An application that
 * configures another backend as well is refused at startup ({@link TwoBackendsException}). Every bean
 * backs off when the application defines its own of the same type:
 * <ul>
 *   <li>{@link EtcdConnectionDetails} from {@code disco.etcd.*};</li>
 *   <li>the jetcd {@link Client}, with a gRPC deadline on every unary call ({@link EtcdDeadlines}), built by
 *       {@link EtcdClients}' rule: {@code https://} endpoints are always TLS, verified with the SSL bundle's
 *       trust store or the JVM's default one; closed by the context, after everything that uses it;</li>
 *   <li>the {@link EtcdOptions} every session uses, with every {@link SessionListener} bean (the metrics);</li>
 *   <li>the {@link Disco} client ({@link EtcdProvider#healingDisco}, or {@link EtcdProvider#disco} with
 *       {@code disco.fail-fast=true}, its failure analysed by {@link DiscoStartupFailureAnalyzer});</li>
 *   <li>the guard's {@link IssuedBound}: {@link EtcdIssuedBound} on the jetcd client.</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({EtcdProvider.class, Client.class})
@ConditionalOnBooleanProperty(name = "disco.etcd.enabled", matchIfMissing = true)
@Conditional(OnBackendCondition.OnEtcd.class)
class EtcdBackendConfiguration {

    /** The jetcd client this configuration built, with its endpoints, for a failed start to name them. */
    private record BuiltClient(Client client, List<String> endpoints) {}

    /** The client {@link #discoEtcdClient} built; null while it built none (the application defines its own). */
    private volatile BuiltClient built;

    /**
     * Fails at once, naming the Netty found and the fix, when the Netty on the application's class path
     * cannot run jetcd (Spring Boot 3.5 manages Netty 4.1), instead of a {@code ClassNotFoundException}
     * inside jetcd at the first request.
     *
     * @param resourceLoader the application's, for its class loader
     * @param environment the application's properties
     * @param beans the application's bean factory
     * @throws TwoBackendsException if another backend is configured as well, naming what configures each
     */
    EtcdBackendConfiguration(ResourceLoader resourceLoader, Environment environment, ListableBeanFactory beans) {
        ConfiguredBackends.refuseTwo(environment, beans);
        ClassLoader loader = resourceLoader.getClassLoader();
        NettyCheck.requireNetty42(loader != null ? loader : EtcdBackendConfiguration.class.getClassLoader());
    }

    /**
     * @param properties {@code disco.etcd.endpoints}, {@code user} and {@code password}
     * @return the connection details from the properties, unless the application (or a test) has its own
     */
    @Bean
    @ConditionalOnMissingBean
    public EtcdConnectionDetails discoEtcdConnectionDetails(DiscoProperties properties) {
        DiscoProperties.Etcd etcd = properties.etcd();
        return new EtcdConnectionDetails() {
            @Override
            public java.util.List<String> endpoints() {
                return etcd.endpoints();
            }

            @Override
            public String user() {
                return etcd.user();
            }

            @Override
            public String password() {
                return etcd.password();
            }
        };
    }

    /**
     * @param properties {@code disco.etcd.*}
     * @param connection where to connect: {@code disco.etcd.endpoints}, or a connection-details bean
     * @param sslBundles the SSL bundles, for {@code disco.etcd.ssl.bundle}
     * @return the jetcd client; the context closes it
     */
    @Bean
    @ConditionalOnMissingBean
    public Client discoEtcdClient(
            DiscoProperties properties, EtcdConnectionDetails connection, ObjectProvider<SslBundles> sslBundles) {
        DiscoProperties.Etcd etcd = properties.etcd();
        ClientBuilder builder = etcdClientBuilder(
                        connection.endpoints(), etcd.ssl().bundle(), sslBundles)
                .interceptor(EtcdDeadlines.unary(etcd.requestTimeout()));
        if (connection.user() != null) {
            builder.user(ByteSequence.from(connection.user(), StandardCharsets.UTF_8));
        }
        if (connection.password() != null) {
            builder.password(ByteSequence.from(connection.password(), StandardCharsets.UTF_8));
        }
        if (etcd.authority() != null) {
            builder.authority(etcd.authority());
        }
        if (etcd.namespace() != null) {
            builder.namespace(ByteSequence.from(etcd.namespace(), StandardCharsets.UTF_8));
        }
        Client client = builder.build();
        built = new BuiltClient(client, List.copyOf(connection.endpoints()));
        return client;
    }

    /**
     * The endpoints' builder, by the provider's one rule ({@link EtcdClients}): {@code https://} is TLS, verified
     * with the SSL bundle's trust store or, without a bundle, the JVM's default trust store; {@code http://} is
     * plaintext, and a bundle for it is refused; a list mixing both is refused.
     */
    private static ClientBuilder etcdClientBuilder(
            java.util.List<String> endpoints, String bundleName, ObjectProvider<SslBundles> sslBundles) {
        boolean tls;
        try {
            tls = EtcdClients.tls(endpoints);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("disco.etcd.endpoints: " + e.getMessage(), e);
        }
        if (bundleName == null) {
            return EtcdClients.builder(endpoints);
        }
        if (!tls) {
            throw new IllegalArgumentException(
                    "disco.etcd.ssl.bundle '" + bundleName + "' is set but disco.etcd.endpoints are" + " plaintext ("
                            + String.join(", ", endpoints) + "): use https:// endpoints for TLS, or remove the bundle");
        }
        SslBundles bundles = sslBundles.getIfAvailable();
        if (bundles == null) {
            throw new NoSuchSslBundleException(
                    bundleName,
                    "disco.etcd.ssl.bundle names SSL bundle '" + bundleName
                            + "', but the application has no SSL bundles (spring.ssl.bundle.*)");
        }
        SslBundle bundle = bundles.getBundle(bundleName);
        try {
            return EtcdClients.builder(endpoints, b -> {
                b.trustManager(bundle.getManagers().getTrustManagerFactory());
                if (bundle.getStores().getKeyStore() != null) {
                    b.keyManager(bundle.getManagers().getKeyManagerFactory());
                }
            });
        } catch (SSLException e) {
            throw new IllegalStateException(
                    "disco.etcd.ssl.bundle '" + bundleName + "' gives no usable TLS context: " + e.getMessage(), e);
        }
    }

    /**
     * @param properties {@code disco.session.*} and {@code disco.client-id}
     * @param listeners every session listener bean, in order (the metrics among them)
     * @return the options of every session of the client
     */
    @Bean
    @ConditionalOnMissingBean
    public EtcdOptions discoEtcdOptions(DiscoProperties properties, ObjectProvider<SessionListener> listeners) {
        DiscoProperties.Session session = properties.session();
        EtcdOptions.Builder builder = EtcdOptions.builder()
                .ttl(session.ttl())
                .requestTimeout(properties.etcd().requestTimeout())
                .failoverAfter(session.failoverAfter())
                .clientId(properties.clientId());
        if (session.grantMargin() != null) {
            builder.grantMargin(session.grantMargin());
        }
        if (session.ownerWait() != null) {
            builder.ownerWait(session.ownerWait());
        }
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    /**
     * @param client the jetcd client
     * @param options the sessions' options
     * @param properties {@code disco.fail-fast}
     * @return the client of this application; the context closes it (after {@link DiscoLifecycle} did)
     * @throws IllegalStateException with {@code disco.fail-fast=true}, if the client could not get its first
     *     lease in time: the provider's {@code DiscoException} (naming the endpoints and the cause) is its cause,
     *     and Boot's failure analysis reports it
     */
    @Bean
    @ConditionalOnMissingBean
    public Disco disco(
            Client client,
            EtcdOptions options,
            DiscoProperties properties,
            ObjectProvider<AcquisitionObserver> observers) {
        DiscoOptions clientOptions = DiscoAutoConfiguration.clientOptions(observers);
        if (!properties.failFast()) {
            return EtcdProvider.healingDisco(client, options, clientOptions);
        }
        try {
            return EtcdProvider.disco(client, options, clientOptions);
        } catch (DiscoException e) {
            BuiltClient ours = built;
            throw new DiscoStartupException(ours != null && ours.client() == client ? ours.endpoints() : List.of(), e);
        }
    }

    /** The guard's bound on etcd: its current revision, read through the jetcd client. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({IssuedBound.class, EtcdIssuedBound.class})
    static class Bound {

        @Bean
        @ConditionalOnMissingBean
        IssuedBound discoIssuedBound(Client client) {
            return EtcdIssuedBound.of(client);
        }
    }
}
