package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.spring.integration.DiscoLeaderInitiator;
import io.disco.spring.integration.DiscoLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * With Spring Integration and disco-spring-integration on the class path and a {@link Disco} bean:
 * <ul>
 *   <li>a {@link DiscoLockRegistry} as the application's {@link LockRegistry} (names under
 *       {@code disco.integration.lock-registry.prefix}), unless it defines a {@code LockRegistry} of its own
 *       or sets {@code disco.integration.lock-registry.enabled=false};</li>
 *   <li>one {@link DiscoLeaderInitiator} per role of {@code disco.integration.leader.roles} (role to election
 *       name), the bean {@code discoLeaderInitiator.<role>} unless the application defines a bean of that
 *       name. Each campaigns from the context's start and publishes {@code OnGrantedEvent} and
 *       {@code OnRevokedEvent} for its role, which drive the role controller's endpoints. They stop in their
 *       phase ({@code Integer.MAX_VALUE - 1000}), before {@link DiscoLifecycle} closes the client.</li>
 * </ul>
 */
@AutoConfiguration(after = DiscoAutoConfiguration.class)
@ConditionalOnClass({Disco.class, LockRegistry.class, DiscoLockRegistry.class})
@ConditionalOnBean(Disco.class)
@EnableConfigurationProperties(DiscoIntegrationProperties.class)
@Import(LeaderInitiatorRegistrar.class)
public class DiscoIntegrationAutoConfiguration {

    /**
     * @param disco the client
     * @param properties {@code disco.integration.lock-registry.prefix}
     * @return the lock registry; it holds nothing of its own and never closes the client
     */
    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    @ConditionalOnBooleanProperty(name = "disco.integration.lock-registry.enabled", matchIfMissing = true)
    public DiscoLockRegistry discoLockRegistry(Disco disco, DiscoIntegrationProperties properties) {
        return new DiscoLockRegistry(disco, properties.lockRegistry().prefix());
    }
}
