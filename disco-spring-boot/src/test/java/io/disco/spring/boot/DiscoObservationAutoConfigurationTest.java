package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.micrometer.DefaultDiscoHoldObservationConvention;
import io.disco.micrometer.DiscoHoldObservationConvention;
import io.disco.micrometer.DiscoObservations;
import io.disco.testservers.EtcdExtension;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The conditions of {@link DiscoObservationAutoConfiguration} and what the client does with its bean: with an
 * {@link ObservationRegistry} the client's acquisitions are observed on it, without one (or without disco-micrometer)
 * there is no observer and the client runs as before. Against the shared etcd member.
 */
class DiscoObservationAutoConfigurationTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DiscoAutoConfiguration.class, DiscoObservationAutoConfiguration.class))
                .withPropertyValues(
                        "disco.etcd.endpoints="
                                + String.join(",", ETCD.cluster().endpoints()),
                        "disco.session.ttl=5s");
    }

    /** An application's observation registry, as Boot's observation auto-configuration would give it. */
    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }
    }

    /** An application's own convention of the hold observation. */
    @Configuration(proxyBeanMethods = false)
    static class HoldConvention {
        @Bean
        DiscoHoldObservationConvention holds() {
            return new DefaultDiscoHoldObservationConvention() {
                @Override
                public String getName() {
                    return "orders.lock.hold";
                }
            };
        }
    }

    private static void lockOnce(Disco disco, String name) throws InterruptedException {
        FencedLock lock = disco.lock(name);
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
    }

    @Test
    void withARegistryTheClientsAcquisitionsAreObservedOnIt() {
        runner().withUserConfiguration(Registry.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DiscoObservations.class);
            String name = "/test/boot/observations/" + UUID.randomUUID();
            lockOnce(context.getBean(Disco.class), name);
            TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            registry.assertThat()
                    .hasObservationWithNameEqualTo("disco.wait")
                    .that()
                    .hasBeenStopped()
                    .hasHighCardinalityKeyValue("disco.name", name)
                    .hasLowCardinalityKeyValue("disco.outcome", "acquired")
                    .backToTestObservationRegistry()
                    .hasObservationWithNameEqualTo("disco.hold")
                    .that()
                    .hasBeenStopped()
                    .hasLowCardinalityKeyValue("disco.outcome", "released");
        });
    }

    @Test
    void aConventionBeanReplacesTheDefault() {
        runner().withUserConfiguration(Registry.class, HoldConvention.class).run(context -> {
            lockOnce(context.getBean(Disco.class), "/test/boot/observations/" + UUID.randomUUID());
            context.getBean(TestObservationRegistry.class)
                    .assertThat()
                    .hasObservationWithNameEqualTo("orders.lock.hold")
                    .that()
                    .hasBeenStopped();
        });
    }

    @Test
    void withoutARegistryOrDiscoMicrometerThereIsNoObserver() {
        runner().run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(DiscoObservations.class);
            lockOnce(context.getBean(Disco.class), "/test/boot/observations/" + UUID.randomUUID());
        });
        runner().withUserConfiguration(Registry.class)
                .withClassLoader(new FilteredClassLoader(DiscoObservations.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(DiscoObservations.class);
                    lockOnce(context.getBean(Disco.class), "/test/boot/observations/" + UUID.randomUUID());
                    context.getBean(TestObservationRegistry.class).assertThat().doesNotHaveAnyObservation();
                });
        runner().withUserConfiguration(Registry.class)
                .withPropertyValues("disco.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DiscoObservations.class));
    }
}
