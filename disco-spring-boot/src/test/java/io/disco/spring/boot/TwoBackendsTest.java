package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.ZooKeeperExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * One backend per application (issue 47, item 1): etcd and ZooKeeper configured at once (by their properties or by
 * the application's beans of their clients) fail startup with Boot's failure analysis, naming what configures each and
 * how to keep one (Redis's
 * properties beside either: {@link RedisAutoConfigurationTest}); a backend switched off ({@code disco.<backend>.enabled=false}) leaves its beans to other uses; with
 * neither configured the application runs on etcd at its default endpoints, as before.
 */
@ExtendWith(OutputCaptureExtension.class)
class TwoBackendsTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static String endpoints() {
        return String.join(",", ETCD.cluster().endpoints());
    }

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DiscoAutoConfiguration.class))
                .withPropertyValues("disco.session.ttl=5s", "disco.etcd.request-timeout=300ms");
    }

    private static CuratorFramework curator() {
        CuratorFramework client = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryNTimes(3, 100));
        client.start();
        return client;
    }

    /** The analysis of the context's startup failure: it is the two backends', naming {@code etcd} and {@code zooKeeper}. */
    private static void refusedNaming(AssertableApplicationContext context, String etcd, String zooKeeper) {
        assertThat(context).hasFailed();
        FailureAnalysis analysis = new TwoBackendsFailureAnalyzer().analyze(context.getStartupFailure());
        assertThat(analysis)
                .as("analysed as two backends: " + context.getStartupFailure())
                .isNotNull();
        assertThat(analysis.getDescription())
                .contains("disco is configured for two backends at once", "etcd: " + etcd, "ZooKeeper: " + zooKeeper);
        assertThat(analysis.getAction()).contains("disco.etcd.enabled=false", "disco.zookeeper.enabled=false");
    }

    @Test
    void theirPropertiesAtOnceAreRefusedNamingBoth() {
        runner().withPropertyValues(
                        "disco.etcd.endpoints=" + endpoints(), "disco.zookeeper.connect-string=" + ZK.connectString())
                .run(context -> refusedNaming(
                        context,
                        "disco.etcd.endpoints=" + endpoints(),
                        "disco.zookeeper.connect-string=" + ZK.connectString()));
    }

    @Test
    void theirClientBeansAtOnceAreRefusedNamingBoth() {
        CuratorFramework curator = curator();
        try (Client jetcd = Client.builder()
                .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                .build()) {
            runner().withBean("myCurator", CuratorFramework.class, () -> curator, d -> d.setDestroyMethodName(""))
                    .withBean("myJetcd", Client.class, () -> jetcd, d -> d.setDestroyMethodName(""))
                    .run(context -> refusedNaming(
                            context, "the jetcd Client bean 'myJetcd'", "the CuratorFramework bean 'myCurator'"));
            runner().withBean("myCurator", CuratorFramework.class, () -> curator, d -> d.setDestroyMethodName(""))
                    .withBean(
                            "testEtcd",
                            EtcdConnectionDetails.class,
                            () -> EtcdConnectionDetails.of(ETCD.cluster().endpoints()))
                    .run(context -> refusedNaming(
                            context,
                            "the EtcdConnectionDetails bean 'testEtcd'",
                            "the CuratorFramework bean 'myCurator'"));
            assertThat(curator.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        } finally {
            curator.close();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Test
    void anApplicationThatConfiguresBothFailsWithTheReportNotAStackTrace(CapturedOutput output) {
        assertThrows(
                Throwable.class,
                () -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.main.banner-mode=off",
                                "disco.etcd.endpoints=" + endpoints(),
                                "disco.zookeeper.connect-string=" + ZK.connectString())
                        .run()
                        .close());
        assertThat(output.getOut())
                .contains(
                        "APPLICATION FAILED TO START",
                        "etcd: disco.etcd.endpoints=" + endpoints(),
                        "ZooKeeper: disco.zookeeper.connect-string=" + ZK.connectString())
                .doesNotContain("Application run failed");
    }

    /** The client gets its owner (its first attempt may have met a loaded machine: it heals). */
    private static void upSoon(Disco disco) {
        await().atMost(Duration.ofSeconds(15)).until(() -> disco.status().state() == DiscoStatus.State.UP);
    }

    @Test
    void aBackendSwitchedOffLeavesItsConfigurationToOtherUses() {
        runner().withPropertyValues(
                        "disco.etcd.enabled=false",
                        "disco.etcd.endpoints=" + endpoints(),
                        "disco.zookeeper.connect-string=" + ZK.connectString())
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(ZooKeeperOptions.class)
                            .doesNotHaveBean(Client.class);
                    upSoon(context.getBean(Disco.class));
                });
        CuratorFramework curator = curator();
        try {
            runner().withPropertyValues("disco.zookeeper.enabled=false", "disco.etcd.endpoints=" + endpoints())
                    .withBean("myCurator", CuratorFramework.class, () -> curator, d -> d.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context)
                                .hasNotFailed()
                                .hasSingleBean(EtcdOptions.class)
                                .doesNotHaveBean(ZooKeeperOptions.class)
                                .doesNotHaveBean("discoCuratorFramework");
                        assertThat(context.getBean(Disco.class).status().state())
                                .isEqualTo(DiscoStatus.State.UP);
                    });
            assertThat(curator.getState()).isEqualTo(CuratorFrameworkState.STARTED);
        } finally {
            curator.close();
        }
    }

    @Test
    void neitherConfiguredIsEtcdAtItsDefaultEndpointsAsBefore() {
        runner().run(context -> {
            assertThat(context)
                    .hasNotFailed()
                    .hasSingleBean(Client.class)
                    .hasSingleBean(Disco.class)
                    .doesNotHaveBean(CuratorFramework.class)
                    .doesNotHaveBean(ZooKeeperOptions.class);
            assertThat(context.getBean(EtcdConnectionDetails.class).endpoints())
                    .containsExactly("http://127.0.0.1:2379");
        });
    }
}
