package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.client.Disco;
import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@code disco.fail-fast=true} with etcd unreachable (issue 51, item 7): a real application's startup fails with
 * Boot's "APPLICATION FAILED TO START" report (what failed, the endpoints, the cause, what to do), not a stack
 * trace; the analyzer, registered in {@code META-INF/spring.factories}, claims that failure and no other, not even
 * a {@code DiscoException} that the application's own bean throws. The same with ZooKeeper unreachable (issue 47):
 * the connect string, the cause per server, what to do.
 */
@ExtendWith(OutputCaptureExtension.class)
class DiscoStartupFailureAnalyzerTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    /** Its own jetcd client: the starter's fail-fast path runs on it, and cannot name its endpoints. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class OwnJetcdClientApp {
        @Bean
        Client myClient(Environment env) {
            return Client.builder()
                    .endpoints(env.getRequiredProperty("test.endpoint"))
                    .build();
        }
    }

    /** Its own {@code Disco} on an unreachable etcd: a {@code DiscoException} at startup that is not the starter's. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class OwnDiscoApp {
        @Bean
        Disco myDisco(Client client) {
            return EtcdProvider.disco(
                    client,
                    EtcdOptions.builder().requestTimeout(Duration.ofSeconds(2)).build());
        }
    }

    /** An address nothing listens on: a port the system handed out and that was closed again. */
    private static String nobodyListens() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }
    }

    private static Throwable startupFailure(Class<?> app, String... properties) {
        return assertThrows(
                Throwable.class,
                () -> new SpringApplicationBuilder(app)
                        .web(WebApplicationType.NONE)
                        .properties("spring.main.banner-mode=off", "disco.etcd.request-timeout=2s")
                        .properties(properties)
                        .run());
    }

    /** The analysis of the starter's failure to start {@code app}: there is one. */
    private static FailureAnalysis analyzedStartupFailure(Class<?> app, String... properties) {
        FailureAnalysis analysis = new DiscoStartupFailureAnalyzer().analyze(startupFailure(app, properties));
        assertThat(analysis).isNotNull();
        return analysis;
    }

    @Test
    void etcdUnreachableWithFailFastIsReportedWithTheEndpointTheCauseAndWhatToDo(CapturedOutput output)
            throws IOException {
        String endpoint = nobodyListens();
        FailureAnalysis analysis =
                analyzedStartupFailure(App.class, "disco.fail-fast=true", "disco.etcd.endpoints=" + endpoint);
        assertThat(analysis.getDescription())
                .contains(
                        "The disco client could not get its lease from etcd at startup",
                        "disco.fail-fast=true",
                        "Endpoints: " + endpoint,
                        "connection refused");
        assertThat(analysis.getAction())
                .contains("Start etcd at those endpoints", "disco.etcd.endpoints", "set disco.fail-fast=false");
        // Boot printed the report, not the failure's stack trace ("Application run failed" with it)
        assertThat(output.getOut())
                .contains("APPLICATION FAILED TO START", "Endpoints: " + endpoint, "Start etcd at those endpoints")
                .doesNotContain("Application run failed");
    }

    @Test
    void theApplicationsOwnJetcdClientIsNamedAsSuch(CapturedOutput output) throws IOException {
        String endpoint = nobodyListens();
        FailureAnalysis analysis =
                analyzedStartupFailure(OwnJetcdClientApp.class, "disco.fail-fast=true", "test.endpoint=" + endpoint);
        assertThat(analysis.getDescription())
                .contains("Endpoints: those of the application's own jetcd Client bean", "connection refused");
        assertThat(output.getOut()).contains("APPLICATION FAILED TO START");
    }

    @Test
    void aFailureThatIsNotTheStartersFailFastIsNotClaimed(CapturedOutput output) throws IOException {
        // the application's own Disco bean fails with the provider's DiscoException: Boot reports it as it would
        Throwable own = startupFailure(OwnDiscoApp.class, "disco.etcd.endpoints=" + nobodyListens());
        // the provider's failure (unanswered within the request timeout, or refused at once: either may come first)
        Throwable provider = own;
        while (provider != null && !(provider instanceof DiscoException)) {
            provider = provider.getCause();
        }
        assertThat(provider).as("the provider's DiscoException in " + own).isNotNull();
        assertThat(new DiscoStartupFailureAnalyzer().analyze(own)).isNull();
        assertThat(output.getOut()).doesNotContain("could not get its lease from etcd at startup");

        // a property out of range, and any DiscoException that is not the starter's startup failure
        assertThat(new DiscoStartupFailureAnalyzer().analyze(startupFailure(App.class, "disco.session.ttl=500ms")))
                .isNull();
        assertThat(new DiscoStartupFailureAnalyzer()
                        .analyze(new BeanCreationException(
                                "disco", new DiscoException("etcd at 127.0.0.1:2379 could not be reached"))))
                .isNull();
        assertThat(new DiscoStartupFailureAnalyzer().analyze(new IllegalStateException("no")))
                .isNull();
    }

    /** Its own ZooKeeper client, started, on a connect string nobody listens on. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class OwnCuratorApp {
        @Bean(destroyMethod = "close")
        CuratorFramework myCurator(Environment env) {
            CuratorFramework client = CuratorFrameworkFactory.newClient(
                    env.getRequiredProperty("test.connect-string"), 10_000, 500, new RetryNTimes(0, 100));
            client.start();
            return client;
        }
    }

    /** A ZooKeeper connect string nothing listens on: a port the system handed out and that was closed again. */
    private static String nobodyListensForZooKeeper() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + socket.getLocalPort();
        }
    }

    @Test
    void zooKeeperUnreachableWithFailFastIsReportedWithTheConnectStringTheCauseAndWhatToDo(CapturedOutput output)
            throws IOException {
        String connectString = nobodyListensForZooKeeper();
        FailureAnalysis analysis = analyzedStartupFailure(
                App.class,
                "disco.fail-fast=true",
                "disco.zookeeper.connect-string=" + connectString,
                "disco.zookeeper.connection-timeout=500ms");
        assertThat(analysis.getDescription())
                .contains(
                        "The disco client could not get its session from ZooKeeper at startup",
                        "disco.fail-fast=true",
                        "Connect string: " + connectString,
                        "connection refused");
        assertThat(analysis.getAction())
                .contains(
                        "Start ZooKeeper at that connect string",
                        "disco.zookeeper.connect-string",
                        "set disco.fail-fast=false");
        assertThat(output.getOut())
                .contains("APPLICATION FAILED TO START", "Connect string: " + connectString)
                .doesNotContain("Application run failed");
    }

    @Test
    void theApplicationsOwnCuratorFrameworkIsNamedAsSuch() throws IOException {
        FailureAnalysis analysis = analyzedStartupFailure(
                OwnCuratorApp.class,
                "disco.fail-fast=true",
                "disco.zookeeper.connection-timeout=500ms",
                "test.connect-string=" + nobodyListensForZooKeeper());
        assertThat(analysis.getDescription())
                .contains("Connect string: that of the application's own CuratorFramework bean", "connection refused");
    }

    /** The ZooKeeper provider's diagnosis per server gets its fix. */
    @Test
    void eachZooKeeperCauseGetsItsFix() {
        DiscoStartupFailureAnalyzer analyzer = new DiscoStartupFailureAnalyzer();
        List<String> cs = List.of("zk-0:2281");
        assertThat(analyzer.analyze(new DiscoStartupException(
                                DiscoStartupException.Backend.ZOOKEEPER,
                                cs,
                                new DiscoException("ZooKeeper at zk-0:2281 could not be reached (no connection within"
                                        + " 15000 ms): zk-0:2281: accepts connections but did not complete ZooKeeper's"
                                        + " handshake (the server is overloaded, frozen or not ZooKeeper; or TLS is"
                                        + " expected)")))
                        .getAction())
                .contains("disco.zookeeper.ssl.enabled=true", "disco.zookeeper.ssl.trust-store");
        assertThat(analyzer.analyze(new DiscoStartupException(
                                DiscoStartupException.Backend.ZOOKEEPER,
                                cs,
                                new DiscoException("ZooKeeper at zk-0:2281 could not be reached (no connection within"
                                        + " 15000 ms): zk-0:2281: unknown host, the name could not be resolved (DNS)")))
                        .getAction())
                .contains("Correct the host name in disco.zookeeper.connect-string");
        assertThat(analyzer.analyze(new DiscoStartupException(
                                DiscoStartupException.Backend.ZOOKEEPER,
                                cs,
                                new DiscoException("ZooKeeper at zk-0:2281 could not be reached (no connection within"
                                        + " 15000 ms): zk-0:2281: no answer to a connection within 1000 ms")))
                        .getAction())
                .contains("echo ruok", "disco.zookeeper.connection-timeout");
    }

    /** The action follows the cause the provider found (its messages, as they are worded). */
    @Test
    void eachCauseGetsItsFix() {
        DiscoStartupFailureAnalyzer analyzer = new DiscoStartupFailureAnalyzer();
        List<String> endpoints = List.of("https://etcd-0:2379");
        assertThat(analyzer.analyze(
                                new DiscoStartupException(
                                        endpoints,
                                        new DiscoException(
                                                "etcd at etcd-0:2379 could not be"
                                                        + " reached (the lease grant failed): the TLS handshake failed (PKIX path building failed)")))
                        .getAction())
                .contains("disco.etcd.ssl.bundle", "CA that signed etcd's certificate");
        assertThat(analyzer.analyze(
                                new DiscoStartupException(
                                        endpoints,
                                        new DiscoException(
                                                "etcd at etcd-0:2379 could not be"
                                                        + " reached (the lease grant failed): unknown host: the name could not be resolved (DNS)")))
                        .getAction())
                .contains("Correct the host name in disco.etcd.endpoints");
        assertThat(analyzer.analyze(new DiscoStartupException(
                                endpoints,
                                new AccessDeniedException(
                                        "etcd at etcd-0:2379 denied"
                                                + " the lease grant: etcdserver: permission denied",
                                        null)))
                        .getAction())
                .contains("disco.etcd.user", "disco.etcd.password");
        assertThat(analyzer.analyze(new DiscoStartupException(
                                endpoints,
                                new DiscoException("etcd at etcd-0:2379 could not be"
                                        + " reached (the lease grant was not answered within 5000 ms): no answer: the endpoints did not even complete"
                                        + " a connection within 1000 ms")))
                        .getAction())
                .contains("etcdctl endpoint health", "disco.etcd.request-timeout");
    }
}
