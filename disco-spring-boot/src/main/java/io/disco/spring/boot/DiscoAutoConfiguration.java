package io.disco.spring.boot;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.client.DiscoOptions;
import io.disco.election.LeadershipRunner;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of disco, from the {@code disco.*} properties ({@link DiscoProperties}), on one backend
 * ({@link ConfiguredBackends} has the rule):
 * <ul>
 *   <li>the one disco's own configuration names: etcd ({@link EtcdBackendConfiguration}) by
 *       {@code disco.etcd.endpoints} or the application's jetcd {@code Client} or {@link EtcdConnectionDetails} bean;
 *       ZooKeeper ({@link ZooKeeperBackendConfiguration}) by {@code disco.zookeeper.connect-string} or the
 *       application's {@code CuratorFramework} bean; Redis ({@link RedisBackendConfiguration}) by a
 *       {@code disco.redis.*} property;</li>
 *   <li>else Redis, when the application has Spring Boot's Redis connection ({@code spring.data.redis.*}: a
 *       {@code DataRedisConnectionDetails} bean), so that an application that already uses Redis adds only the
 *       starter;</li>
 *   <li>else etcd, its endpoints {@code disco.etcd.endpoints} by default {@code http://127.0.0.1:2379};</li>
 *   <li>each only with its provider on the class path, and none while {@code disco.<backend>.enabled=false};
 *       configuring two at once through disco's own properties or beans fails startup, naming both
 *       ({@link TwoBackendsFailureAnalyzer}).</li>
 * </ul>
 * The backend's configuration makes its client (jetcd's {@code Client}, Curator's {@code CuratorFramework},
 * Lettuce's {@code RedisClient}), the sessions' options (with every {@code SessionListener} bean: the metrics), the
 * {@link Disco} client (with every {@link AcquisitionObserver} bean: the observations of
 * {@link DiscoObservationAutoConfiguration}) (healing while the backend is unreachable at startup, unless
 * {@code disco.fail-fast=true}, which fails startup with Boot's failure analysis, {@link DiscoStartupFailureAnalyzer})
 * and the guard's issued bound (etcd, ZooKeeper). Every bean backs off when the application defines its own of the
 * same type. Here, for any backend: {@link DiscoLifecycle}, the graceful shutdown (leaderships step down, grants are
 * released, the lease or session ends, and then the backend's client closes, if the starter built it).
 *
 * <p>Health, metrics and the actuator endpoint are in {@link DiscoActuatorAutoConfiguration}; the guard in
 * {@link DiscoGuardAutoConfiguration}; the adapters, each with its module on the class path, in
 * {@link DiscoShedLockAutoConfiguration}, {@link DiscoLeaderOnlyAutoConfiguration} and
 * {@link DiscoIntegrationAutoConfiguration} (they stop before {@link DiscoLifecycle} closes the client). All of
 * them are the same on every backend. It runs after Spring Boot's Redis auto-configuration, whose connection details
 * decide whether Redis is the backend.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration",
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"
        })
@ConditionalOnClass(Disco.class)
@ConditionalOnBooleanProperty(name = "disco.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DiscoProperties.class)
@Import({ZooKeeperBackendConfiguration.class, RedisBackendConfiguration.class, EtcdBackendConfiguration.class})
public class DiscoAutoConfiguration {

    /**
     * @param observers every acquisition observer bean, in order (the observations of
     *     {@link DiscoObservationAutoConfiguration} among them)
     * @return the client's options, whichever the backend
     */
    static DiscoOptions clientOptions(ObjectProvider<AcquisitionObserver> observers) {
        DiscoOptions.Builder options = DiscoOptions.builder();
        observers.orderedStream().forEach(options::observer);
        return options.build();
    }

    /** Made by Spring. */
    public DiscoAutoConfiguration() {}

    /**
     * @param disco the client
     * @param runners the leadership runners of the application, stepped down first
     * @param properties {@code disco.shutdown.timeout}
     * @return the graceful shutdown
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(Disco.class)
    public DiscoLifecycle discoLifecycle(
            Disco disco, ObjectProvider<LeadershipRunner> runners, DiscoProperties properties) {
        return new DiscoLifecycle(disco, runners, properties.shutdown().timeout());
    }
}
