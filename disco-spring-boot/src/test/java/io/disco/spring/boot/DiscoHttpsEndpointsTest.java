package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.testservers.TlsAndPlainEtcdExtension;
import java.time.Duration;
import java.util.Locale;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code disco.etcd.endpoints=https://...} always means TLS (issue 45, item 4), against a TLS etcd and a
 * plaintext one: with an SSL bundle that trusts the CA it works; with no bundle the JVM's default trust
 * store decides (it does not trust the test CA: health DOWN saying the TLS handshake failed and what to
 * check, startup failing so with {@code disco.fail-fast}); {@code https://} to a plaintext etcd is never
 * UP over plaintext; a list mixing {@code http://} and {@code https://}, and an SSL bundle for
 * {@code http://} endpoints, fail startup.
 */
class DiscoHttpsEndpointsTest {

    @RegisterExtension
    static final TlsAndPlainEtcdExtension ETCD = TlsAndPlainEtcdExtension.create();

    private static ApplicationContextRunner runner(String endpoints) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        SslAutoConfiguration.class,
                        DiscoAutoConfiguration.class,
                        DiscoActuatorAutoConfiguration.class,
                        HealthContributorAutoConfiguration.class))
                .withPropertyValues(
                        "disco.etcd.endpoints=" + endpoints,
                        "disco.etcd.request-timeout=2s",
                        "disco.session.ttl=5s",
                        "spring.ssl.bundle.pem.etcd-ca.truststore.certificate=file:"
                                + ETCD.tls().caFile());
    }

    private static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    @Test
    void httpsWithABundleThatTrustsTheCaIsUp() {
        runner(ETCD.secure().endpoint(0))
                .withPropertyValues("disco.etcd.ssl.bundle=etcd-ca", "disco.fail-fast=true")
                .run(context -> StartedClient.assertUpAndLocks(context, "/test/boot-https/"));
    }

    @Test
    void httpsWithoutABundleUsesTheJvmsTrustStoreAndSaysTheHandshakeFailed() {
        String endpoint = ETCD.secureHostPort();
        runner(ETCD.secure().endpoint(0)).run(context -> {
            assertThat(context).hasNotFailed();
            Disco disco = context.getBean(Disco.class);
            DiscoStatus status = disco.status();
            assertThat(status.state()).isEqualTo(DiscoStatus.State.HEALING);
            String problem = status.lastProblem().orElse("");
            assertThat(problem)
                    .contains(endpoint)
                    .containsIgnoringCase("TLS handshake failed")
                    .contains("disco.etcd.ssl.bundle")
                    .contains("certificate");
            assertThat(context.getBean(DiscoHealthIndicator.class)
                            .health()
                            .getStatus()
                            .getCode())
                    .isEqualTo("DOWN");
        });
        runner(ETCD.secure().endpoint(0))
                .withPropertyValues("disco.fail-fast=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    String m = messages(context.getStartupFailure());
                    assertThat(m)
                            .contains(endpoint)
                            .containsIgnoringCase("TLS handshake failed")
                            .contains("disco.etcd.ssl.bundle");
                });
    }

    /** The case: https:// to a plaintext etcd started UP over plaintext. */
    @Test
    void httpsToAPlaintextEtcdIsNeverUpOverPlaintext() {
        String endpoint = ETCD.plainHostPort();
        runner("https://" + endpoint).run(context -> {
            assertThat(context).hasNotFailed();
            Disco disco = context.getBean(Disco.class);
            // a few of the client's tries, none of them UP
            Awaitility.await()
                    .during(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> disco.status().state() != DiscoStatus.State.UP);
            DiscoStatus status = disco.status();
            assertThat(status.lastProblem().orElse("")).contains(endpoint);
            assertThat(status.lastProblem().orElse("").toLowerCase(Locale.ROOT)).contains("tls");
            assertThat(context.getBean(DiscoHealthIndicator.class)
                            .health()
                            .getStatus()
                            .getCode())
                    .isEqualTo("DOWN");
        });
        runner("https://" + endpoint).withPropertyValues("disco.fail-fast=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(messages(context.getStartupFailure())).contains(endpoint).containsIgnoringCase("tls");
        });
        // and http:// to it is plaintext, as it says
        runner(ETCD.plain().endpoint(0))
                .withPropertyValues("disco.fail-fast=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Disco.class).status().state()).isEqualTo(DiscoStatus.State.UP);
                });
    }

    @Test
    void aMixedListFailsStartupNamingBoth() {
        runner(ETCD.plain().endpoint(0) + "," + ETCD.secure().endpoint(0)).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class);
            assertThat(messages(context.getStartupFailure()))
                    .contains("disco.etcd.endpoints")
                    .contains(ETCD.plain().endpoint(0))
                    .contains(ETCD.secure().endpoint(0));
        });
    }

    @Test
    void anSslBundleForHttpEndpointsFailsStartup() {
        runner(ETCD.plain().endpoint(0))
                .withPropertyValues("disco.etcd.ssl.bundle=etcd-ca")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(messages(context.getStartupFailure()))
                            .contains("disco.etcd.ssl.bundle")
                            .contains(ETCD.plain().endpoint(0))
                            .contains("https://");
                });
    }
}
