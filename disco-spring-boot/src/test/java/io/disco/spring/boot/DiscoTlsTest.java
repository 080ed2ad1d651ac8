package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdTls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * TLS through a Spring Boot SSL bundle (issue 31, items 2 and 10): against an etcd member that requires
 * a client certificate (mutual TLS), {@code disco.etcd.ssl.bundle} names a PEM bundle with the CA as its
 * trust store and the client's certificate and key as its key store.
 */
class DiscoTlsTest {

    static EtcdTls tls;
    static EtcdCluster etcd;

    @BeforeAll
    static void start() {
        tls = EtcdTls.generate(true, "client");
        etcd = EtcdCluster.start(1, tls);
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, DiscoAutoConfiguration.class))
                .withPropertyValues(
                        "disco.etcd.endpoints=" + String.join(",", etcd.endpoints()),
                        "disco.etcd.request-timeout=3s",
                        "spring.ssl.bundle.pem.etcd.truststore.certificate=file:" + tls.caFile(),
                        "spring.ssl.bundle.pem.etcd.keystore.certificate=file:" + tls.clientCertFile(),
                        "spring.ssl.bundle.pem.etcd.keystore.private-key=file:" + tls.clientKeyFile(),
                        "spring.ssl.bundle.pem.trust-only.truststore.certificate=file:" + tls.caFile());
    }

    @Test
    void mutualTlsThroughAnSslBundle() {
        assertThat(etcd.endpoints()).allMatch(e -> e.startsWith("https://"));
        runner().withPropertyValues("disco.etcd.ssl.bundle=etcd", "disco.fail-fast=true")
                .run(context -> StartedClient.assertUpAndLocks(context, "/test/boot-tls/"));
    }

    @Test
    void withoutTheClientCertificateEtcdRefusesAndAnUnknownBundleFailsStartup() {
        runner().withPropertyValues("disco.etcd.ssl.bundle=trust-only", "disco.fail-fast=true")
                .run(context -> assertThat(context).hasFailed());
        runner().withPropertyValues("disco.etcd.ssl.bundle=nope").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("nope");
        });
    }
}
