package io.disco.spring.boot;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.micrometer.DiscoHoldObservationConvention;
import io.disco.micrometer.DiscoObservations;
import io.disco.micrometer.DiscoWaitObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The client's acquisitions and holds as Micrometer observations, on Boot's {@link ObservationRegistry} (so on its
 * meters and, with a tracer, its traces): a {@link DiscoObservations} bean, an {@link AcquisitionObserver} that
 * {@link DiscoAutoConfiguration} gives the {@link Disco} client. A request's trace then shows a {@code lock wait} span
 * and a {@code lock hold} span with the fencing token, beside its own work.
 *
 * <ul>
 *   <li>On when the application has an {@code ObservationRegistry} bean (Boot's observation auto-configuration, with
 *       the actuator) and disco-micrometer is on the class path; off otherwise, at no cost to the client.</li>
 *   <li>{@code management.observations.enable.disco=false} turns the observations off (Boot's switch by name prefix);
 *       a {@link DiscoWaitObservationConvention} or {@link DiscoHoldObservationConvention} bean replaces the default
 *       convention; an application's own {@code DiscoObservations} bean replaces this one.</li>
 * </ul>
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({Disco.class, DiscoObservations.class, ObservationRegistry.class})
@ConditionalOnBooleanProperty(name = "disco.enabled", matchIfMissing = true)
@ConditionalOnBean(ObservationRegistry.class)
public class DiscoObservationAutoConfiguration {

    /**
     * @param registry Boot's observation registry
     * @param waitConvention the application's convention of the wait observation, if it has one
     * @param holdConvention the application's convention of the hold observation, if it has one
     * @return the client's observer
     */
    @Bean
    @ConditionalOnMissingBean
    public DiscoObservations discoObservations(
            ObservationRegistry registry,
            ObjectProvider<DiscoWaitObservationConvention> waitConvention,
            ObjectProvider<DiscoHoldObservationConvention> holdConvention) {
        DiscoObservations observations = DiscoObservations.of(registry);
        DiscoWaitObservationConvention wait = waitConvention.getIfUnique();
        if (wait != null) {
            observations = observations.withWaitConvention(wait);
        }
        DiscoHoldObservationConvention hold = holdConvention.getIfUnique();
        if (hold != null) {
            observations = observations.withHoldConvention(hold);
        }
        return observations;
    }
}
