package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.spring.scheduling.EnableLeaderOnly;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/**
 * With disco-spring-scheduling on the class path and a {@link Disco} bean: {@code @LeaderOnly} enabled, as
 * {@link EnableLeaderOnly} does (its post-processor and its elections, one leadership runner per election
 * name on the client), unless {@code disco.leader-only.enabled=false} or the application enabled it itself.
 * The application still enables scheduling ({@code @EnableScheduling}).
 *
 * <p>The elections stop with the context in the default phase, before {@link DiscoLifecycle} closes the
 * client: a leader-only method still running is interrupted and its term given back while the client is open.
 */
@AutoConfiguration(after = DiscoAutoConfiguration.class)
@ConditionalOnClass({Disco.class, EnableLeaderOnly.class})
@ConditionalOnBean(Disco.class)
@ConditionalOnBooleanProperty(name = "disco.leader-only.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DiscoLeaderOnlyProperties.class)
public class DiscoLeaderOnlyAutoConfiguration {

    /** {@code @EnableLeaderOnly}, unless the application has it. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(type = "io.disco.spring.scheduling.LeaderOnlyElections")
    @EnableLeaderOnly
    static class LeaderOnly {}
}
