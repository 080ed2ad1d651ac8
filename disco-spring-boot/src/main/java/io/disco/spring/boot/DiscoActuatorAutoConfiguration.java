package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.micrometer.DiscoMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Health, metrics and the actuator endpoint of the auto-configured client, each switched on by its own
 * class on the class path (Spring Boot 4's health API, Micrometer and disco-micrometer, the actuator):
 * <ul>
 *   <li>{@link DiscoHealthIndicator}, the health contributor {@code disco}
 *       ({@code management.health.disco.enabled=false} turns it off);</li>
 *   <li>{@link DiscoMetrics}, bound when a {@link MeterRegistry} bean exists: it is a session listener, so
 *       the client's sessions report to it;</li>
 *   <li>{@link DiscoEndpoint}, the endpoint {@code disco}, when it is available.</li>
 * </ul>
 */
@AutoConfiguration(
        after = DiscoAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"
        })
@ConditionalOnClass(Disco.class)
public class DiscoActuatorAutoConfiguration {

    /** The metrics: a session listener bean, which the client's options collect when they are created. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({MeterRegistry.class, DiscoMetrics.class})
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        DiscoMetrics discoMetrics(MeterRegistry registry) {
            return DiscoMetrics.of(registry);
        }
    }

    /** The health contributor {@code disco}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnBean(Disco.class)
    @ConditionalOnEnabledHealthIndicator("disco")
    static class HealthContributor {

        @Bean
        @ConditionalOnMissingBean(name = "discoHealthIndicator")
        DiscoHealthIndicator discoHealthIndicator(Disco disco) {
            return new DiscoHealthIndicator(disco);
        }
    }

    /** The endpoint {@code disco}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
    @ConditionalOnBean(Disco.class)
    @ConditionalOnAvailableEndpoint(DiscoEndpoint.class)
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        DiscoEndpoint discoEndpoint(Disco disco) {
            return new DiscoEndpoint(disco);
        }
    }
}
