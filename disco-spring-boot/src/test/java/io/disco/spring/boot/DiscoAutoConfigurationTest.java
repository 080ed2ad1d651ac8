package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.guard.GuardFilter;
import io.disco.micrometer.DiscoMetrics;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Every condition and every property error of the auto-configuration (issue 31, item 10), with
 * {@link ApplicationContextRunner}. Contexts that make a client run against the shared etcd member.
 */
class DiscoAutoConfigurationTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final AutoConfigurations ALL = AutoConfigurations.of(
            DiscoAutoConfiguration.class,
            DiscoActuatorAutoConfiguration.class,
            DiscoGuardAutoConfiguration.class,
            DiscoGrpcGuardAutoConfiguration.class);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(
                        "disco.etcd.endpoints="
                                + String.join(",", ETCD.cluster().endpoints()),
                        "disco.session.ttl=5s");
    }

    /** A property out of range fails startup with the property's name and its range. */
    private void fails(String property, String... expected) {
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(property)
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable root = context.getStartupFailure();
                    StringBuilder messages = new StringBuilder();
                    for (Throwable t = root; t != null; t = t.getCause()) {
                        messages.append(t.getMessage()).append('\n');
                    }
                    for (String e : expected) {
                        assertThat(messages.toString()).contains(e);
                    }
                });
    }

    @Test
    void invalidPropertiesFailStartupNamingThePropertyAndItsRange() {
        fails("disco.session.ttl=500ms", "disco.session.ttl must be from PT1S to PT2500000H, got PT0.5S");
        fails("disco.session.ttl=1500ms", "disco.session.ttl must be whole seconds");
        fails("disco.etcd.request-timeout=0s", "disco.etcd.request-timeout must be from PT0.001S to PT10M, got PT0S");
        fails(
                "disco.session.grant-margin=30s",
                "disco.session.grant-margin must be from 0 to less than disco.session.ttl (PT30S)");
        fails("disco.session.failover-after=2m", "disco.session.failover-after must be from PT0.001S to PT1M");
        fails("disco.shutdown.timeout=-1s", "disco.shutdown.timeout must be from PT0S to PT10M");
        fails("disco.client-id=" + "x".repeat(257), "disco.client-id must be at most 256 characters, got 257");
        fails(
                "disco.guard.http.enabled=true",
                "disco.guard.http.url-patterns must name at least one servlet URL pattern");
        fails("disco.guard.http.key.source=header", "disco.guard.http.key.name must name the header");
        fails("disco.guard.http.key.source=path-variable", "disco.guard.http.key.name must name the path-variable");
        fails("disco.guard.http.drain-timeout=11m", "disco.guard.http.drain-timeout must be from PT0S to PT10M");
    }

    @Test
    void theClientTheJetcdClientAndTheLifecycleFromProperties() {
        runner().withPropertyValues("disco.client-id=orders-1", "disco.session.grant-margin=1s")
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(Client.class)
                            .hasSingleBean(Disco.class)
                            .hasSingleBean(DiscoLifecycle.class)
                            .doesNotHaveBean(DiscoMetrics.class)
                            .doesNotHaveBean(FilterRegistrationBean.class);
                    EtcdOptions options = context.getBean(EtcdOptions.class);
                    assertThat(options.ttl()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(options.clientId()).isEqualTo("orders-1");
                    assertThat(options.grantMargin()).contains(Duration.ofSeconds(1));
                    Disco disco = context.getBean(Disco.class);
                    assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
                    assertThat(disco.status().ttl()).isEqualTo(Duration.ofSeconds(5));
                });
    }

    @Test
    void disabled() {
        runner().withPropertyValues("disco.enabled=false")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(Disco.class)
                        .doesNotHaveBean(Client.class));
    }

    @Test
    void withoutTheProviderOnTheClassPathNothingIsConfigured() {
        runner().withClassLoader(new FilteredClassLoader(EtcdProvider.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(Disco.class)
                        .doesNotHaveBean(Client.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {
        @Bean
        Client myClient() {
            return Client.builder()
                    .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                    .build();
        }

        @Bean
        Disco myDisco(Client myClient) {
            return EtcdProvider.disco(myClient);
        }
    }

    @Test
    void theApplicationsOwnBeansWin() {
        runner().withUserConfiguration(OwnClient.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Client.class).hasSingleBean(Disco.class);
            assertThat(context)
                    .hasBean("myClient")
                    .hasBean("myDisco")
                    .doesNotHaveBean("discoEtcdClient")
                    .doesNotHaveBean("disco");
            assertThat(context.getBean(DiscoLifecycle.class)).isNotNull();
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TestEtcdConnection {
        @Bean
        EtcdConnectionDetails testEtcd() {
            return EtcdConnectionDetails.of(ETCD.cluster().endpoints());
        }
    }

    @Test
    void aConnectionDetailsBeanWinsOverTheProperties() {
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withUserConfiguration(TestEtcdConnection.class)
                .withPropertyValues("disco.etcd.endpoints=http://127.0.0.1:1", "disco.fail-fast=true")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(EtcdConnectionDetails.class);
                    assertThat(context.getBean(Disco.class).status().state()).isEqualTo(DiscoStatus.State.UP);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class Meters {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Test
    void metricsWhenAMeterRegistryExistsAndTheSessionsReportToThem() {
        runner().withUserConfiguration(Meters.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DiscoMetrics.class);
            DiscoMetrics metrics = context.getBean(DiscoMetrics.class);
            assertThat(context.getBean(EtcdOptions.class).listeners()).contains(metrics);
            io.disco.lock.FencedLock lock =
                    context.getBean(Disco.class).lock("/test/boot-metrics/" + java.util.UUID.randomUUID());
            lock.lock();
            lock.unlock();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            // listeners hear of events off the acquiring thread
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> registry.find("disco.acquisitions")
                                    .tag("outcome", "acquired")
                                    .timer()
                            != null);
        });
    }

    @Test
    void healthContributorUnlessDisabled() {
        runner().withConfiguration(AutoConfigurations.of(
                        org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration
                                .class))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean("discoHealthIndicator");
                    assertThat(context.getBean(DiscoHealthIndicator.class)
                                    .health()
                                    .getStatus()
                                    .getCode())
                            .isEqualTo("UP");
                });
        runner().withPropertyValues("management.health.disco.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DiscoHealthIndicator.class));
        runner().withClassLoader(
                        new FilteredClassLoader(org.springframework.boot.health.contributor.HealthIndicator.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(Disco.class)
                        .doesNotHaveBean(DiscoHealthIndicator.class));
    }

    @Test
    void endpointWhenExposed() {
        runner().withPropertyValues("management.endpoints.web.exposure.include=disco")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(DiscoEndpoint.class));
        runner().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DiscoEndpoint.class));
    }

    @Test
    void theGuardOnlyInAServletApplicationOnlyWhenEnabledOnlyOnItsPatterns() {
        new WebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(
                        "disco.etcd.endpoints="
                                + String.join(",", ETCD.cluster().endpoints()),
                        "disco.guard.http.enabled=true",
                        "disco.guard.http.url-patterns=/orders/*,/stock/*")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean(DiscoGuardAutoConfiguration.FILTER_NAME);
                    FilterRegistrationBean<?> registration =
                            context.getBean(DiscoGuardAutoConfiguration.FILTER_NAME, FilterRegistrationBean.class);
                    assertThat(registration.getFilter()).isInstanceOf(GuardFilter.class);
                    assertThat(registration.getUrlPatterns()).containsExactly("/orders/*", "/stock/*");
                });
        new WebApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("disco.etcd.endpoints="
                        + String.join(",", ETCD.cluster().endpoints()))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class));
        runner().withPropertyValues("disco.guard.http.enabled=true", "disco.guard.http.url-patterns=/orders/*")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(FilterRegistrationBean.class));
    }

    @Test
    void theGrpcGuardAsAGlobalInterceptorOnlyWithSpringGrpcAndWhenEnabled() {
        runner().withPropertyValues("disco.guard.grpc.enabled=true", "disco.guard.grpc.key-metadata=x-order")
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(io.disco.fencing.guard.GuardServerInterceptor.class);
                    assertThat(context.findAnnotationOnBean(
                                    DiscoGrpcGuardAutoConfiguration.INTERCEPTOR_NAME,
                                    org.springframework.grpc.server.GlobalServerInterceptor.class))
                            .isNotNull();
                });
        runner().run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(io.disco.fencing.guard.GuardServerInterceptor.class));
        runner().withPropertyValues("disco.guard.grpc.enabled=true")
                .withClassLoader(new FilteredClassLoader(org.springframework.grpc.server.GlobalServerInterceptor.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(io.disco.fencing.guard.GuardServerInterceptor.class));
    }

    @Test
    void etcdDownAtStartupDoesNotFailTheApplicationUnlessFailFast() {
        String nobody = "http://127.0.0.1:1"; // nothing listens on port 1
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("disco.etcd.endpoints=" + nobody, "disco.etcd.request-timeout=300ms")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    DiscoStatus status = context.getBean(Disco.class).status();
                    assertThat(status.state()).isEqualTo(DiscoStatus.State.HEALING);
                    assertThat(status.lastProblem()).isPresent();
                });
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(
                        "disco.etcd.endpoints=" + nobody, "disco.etcd.request-timeout=300ms", "disco.fail-fast=true")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void nettyFourOneFailsAtOnceNamingTheVersionAndTheFix() {
        runner().withClassLoader(new FilteredClassLoader(NettyCheck.NETTY_42_CLASS))
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable t = context.getStartupFailure();
                    while (t.getCause() != null && !(t instanceof IllegalStateException)) {
                        t = t.getCause();
                    }
                    // the Netty on this class path: this build's 4.2.18, Boot's own in the boot41-/boot42-it modules
                    String found =
                            io.netty.util.Version.identify().get("netty-common").artifactVersion();
                    assertThat(t.getMessage())
                            .contains(
                                    "disco needs Netty 4.2",
                                    "the class path has Netty " + found,
                                    "netty.version>4.2.18.Final",
                                    "Spring Boot 4.0");
                });
    }
}
