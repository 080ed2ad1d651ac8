package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.Holding;
import io.disco.shedlock.DiscoLockProvider;
import io.disco.spring.integration.DiscoLeaderInitiator;
import io.disco.spring.integration.DiscoLockRegistry;
import io.disco.spring.scheduling.EnableLeaderOnly;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * The starter's wiring of the adapters (issue 32): ShedLock's lock provider, {@code @LeaderOnly}, Spring
 * Integration's lock registry and one leader initiator per role, each under its conditions: its classes, a
 * {@code Disco} bean, its property, and no bean of the application's in its place. The same on every backend
 * (issue 47): on etcd ({@link DiscoAdaptersAutoConfigurationOnEtcdTest}), on ZooKeeper
 * ({@link DiscoAdaptersAutoConfigurationOnZooKeeperTest}) and on Redis ({@link DiscoAdaptersAutoConfigurationOnRedisTest},
 * through Spring Boot's Redis auto-configuration).
 */
abstract class DiscoAdaptersAutoConfigurationTest {

    /** @return the properties that put the application on the backend */
    abstract String[] backendProperties();

    /** @return the auto-configurations the backend's properties need (Spring Boot's Redis one, on Redis); none */
    Class<?>[] backendAutoConfigurations() {
        return new Class<?>[0];
    }

    /** The bean {@code @EnableLeaderOnly} registers (its class is package-private). */
    static final String ELECTIONS = "io.disco.spring.scheduling.LeaderOnlyElections";

    private static final AutoConfigurations ALL = AutoConfigurations.of(
            DiscoAutoConfiguration.class,
            DiscoShedLockAutoConfiguration.class,
            DiscoLeaderOnlyAutoConfiguration.class,
            DiscoIntegrationAutoConfiguration.class);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withConfiguration(AutoConfigurations.of(backendAutoConfigurations()))
                .withPropertyValues(backendProperties())
                .withPropertyValues("disco.session.ttl=5s");
    }

    @Test
    void everyAdapterIsWiredWhenItsClassesAndTheClientArePresent() {
        String prefix = "/boot-wire/" + UUID.randomUUID() + "/shed";
        runner().withPropertyValues("disco.shedlock.prefix=" + prefix).run(context -> {
            assertThat(context)
                    .hasNotFailed()
                    .hasSingleBean(LockProvider.class)
                    .hasSingleBean(DiscoLockProvider.class)
                    .hasSingleBean(LockRegistry.class)
                    .hasSingleBean(DiscoLockRegistry.class)
                    .hasBean(ELECTIONS)
                    .hasSingleBean(AdapterShutdown.class)
                    .doesNotHaveBean(DiscoLeaderInitiator.class);
            // the provider locks under disco.shedlock.prefix
            Optional<SimpleLock> lock = context.getBean(LockProvider.class)
                    .lock(new LockConfiguration(Instant.now(), "job", Duration.ofSeconds(5), Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(context.getBean(Disco.class).holdings())
                    .extracting(Holding::name)
                    .contains(prefix + "/job");
            lock.get().unlock();
        });
    }

    @Test
    void withoutTheClientNoAdapterIsWired() {
        runner().withPropertyValues("disco.enabled=false", "disco.integration.leader.roles.orders=/boot-wire/orders")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(Disco.class)
                        .doesNotHaveBean(LockProvider.class)
                        .doesNotHaveBean(LockRegistry.class)
                        .doesNotHaveBean(ELECTIONS)
                        .doesNotHaveBean(DiscoLeaderInitiator.class)
                        .doesNotHaveBean(AdapterShutdown.class));
    }

    @Test
    void aMissingClassLeavesItsAdapterOut() {
        String roles = "disco.integration.leader.roles.orders=/boot-wire/" + UUID.randomUUID();
        runner().withClassLoader(new FilteredClassLoader(LockProvider.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(DiscoLockProvider.class)
                        .hasBean(ELECTIONS)
                        .hasSingleBean(DiscoLockRegistry.class));
        runner().withClassLoader(new FilteredClassLoader(DiscoLockProvider.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LockProvider.class)
                        .hasSingleBean(DiscoLockRegistry.class));
        runner().withClassLoader(new FilteredClassLoader(EnableLeaderOnly.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(ELECTIONS)
                        .hasSingleBean(DiscoLockProvider.class));
        runner().withPropertyValues(roles)
                .withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(DiscoLockRegistry.class)
                        .doesNotHaveBean(DiscoLeaderInitiator.class)
                        .hasSingleBean(DiscoLockProvider.class));
        runner().withPropertyValues(roles)
                .withClassLoader(new FilteredClassLoader(DiscoLockRegistry.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(LockRegistry.class)
                        .doesNotHaveBean(DiscoLeaderInitiator.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        @Bean
        LockProvider myLockProvider() {
            return configuration -> Optional.empty();
        }

        @Bean
        LockRegistry<?> myLockRegistry() {
            return new DefaultLockRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableLeaderOnly
    static class OwnLeaderOnly {}

    @Configuration(proxyBeanMethods = false)
    static class OwnInitiator {
        @Bean(LeaderInitiatorRegistrar.PREFIX + "orders")
        DiscoLeaderInitiator myOrders(Disco disco) {
            DiscoLeaderInitiator initiator =
                    new DiscoLeaderInitiator(disco, "/boot-wire/mine/" + UUID.randomUUID(), "orders");
            initiator.setAutoStartup(false);
            return initiator;
        }
    }

    @Test
    void theApplicationsOwnBeansReplaceTheAdapters() {
        runner().withUserConfiguration(OwnBeans.class, OwnLeaderOnly.class, OwnInitiator.class)
                .withPropertyValues("disco.integration.leader.roles.orders=/boot-wire/" + UUID.randomUUID())
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(LockProvider.class)
                            .hasBean("myLockProvider")
                            .doesNotHaveBean(DiscoLockProvider.class)
                            .hasSingleBean(LockRegistry.class)
                            .hasBean("myLockRegistry")
                            .doesNotHaveBean(DiscoLockRegistry.class)
                            .hasBean(ELECTIONS)
                            .hasSingleBean(DiscoLeaderInitiator.class);
                    assertThat(context.getBeanNamesForType(Class.forName(ELECTIONS)))
                            .hasSize(1);
                    assertThat(context.getBean(LeaderInitiatorRegistrar.PREFIX + "orders", DiscoLeaderInitiator.class)
                                    .isRunning())
                            .as("the application's own initiator, not started")
                            .isFalse();
                });
    }

    @Test
    void propertiesSwitchTheAdaptersOff() {
        runner().withPropertyValues(
                        "disco.shedlock.enabled=false",
                        "disco.leader-only.enabled=false",
                        "disco.integration.lock-registry.enabled=false")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(Disco.class)
                        .doesNotHaveBean(LockProvider.class)
                        .doesNotHaveBean(ELECTIONS)
                        .doesNotHaveBean(LockRegistry.class));
    }

    @Test
    void oneInitiatorPerRoleCampaignsInItsElection() {
        String base = "/boot-wire/" + UUID.randomUUID();
        runner().withPropertyValues(
                        "disco.integration.leader.roles.orders=" + base + "/orders",
                        "disco.integration.leader.roles.billing=" + base + "/billing")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeansOfType(DiscoLeaderInitiator.class))
                            .containsOnlyKeys(
                                    LeaderInitiatorRegistrar.PREFIX + "orders",
                                    LeaderInitiatorRegistrar.PREFIX + "billing");
                    DiscoLeaderInitiator orders =
                            context.getBean(LeaderInitiatorRegistrar.PREFIX + "orders", DiscoLeaderInitiator.class);
                    assertThat(orders.isRunning()).isTrue();
                    assertThat(orders.getContext().getRole()).isEqualTo("orders");
                    org.awaitility.Awaitility.await()
                            .atMost(Duration.ofSeconds(10))
                            .untilAsserted(() -> assertThat(
                                            context.getBean(Disco.class).holdings())
                                    .extracting(Holding::name)
                                    .contains(base + "/orders", base + "/billing"));
                });
    }

    /** A bad value fails startup, naming the property. */
    private void fails(String property, String expected) {
        runner().withPropertyValues(property).run(context -> {
            assertThat(context).hasFailed();
            StringBuilder messages = new StringBuilder();
            for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains(expected);
        });
    }

    @Test
    void badPrefixesAndElectionNamesFailStartupNamingTheProperty() {
        fails("disco.shedlock.prefix=/jobs/", "disco.shedlock.prefix must be a disco name");
        fails(
                "disco.integration.lock-registry.prefix= ",
                "disco.integration.lock-registry.prefix must be a disco name");
        fails(
                "disco.integration.leader.roles.orders=/elections/",
                "disco.integration.leader.roles.orders must be a disco name");
    }
}
