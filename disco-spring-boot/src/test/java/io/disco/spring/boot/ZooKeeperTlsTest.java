package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.lock.FencedLock;
import io.disco.testservers.EtcdTls;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code disco.zookeeper.ssl.*} against a ZooKeeper server that speaks TLS only and asks for a client certificate
 * ({@link TlsZooKeeper}, issue 47): with the trust store of its CA and the client's key store the client connects,
 * verifying the server's certificate, and locks; without the key store, or trusting another CA, the handshake fails
 * and the client heals, saying that the servers did not complete ZooKeeper's handshake.
 */
class ZooKeeperTlsTest {

    private static TlsZooKeeper server;

    @BeforeAll
    static void start() throws Exception {
        server = TlsZooKeeper.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DiscoAutoConfiguration.class))
                .withPropertyValues(
                        "disco.zookeeper.connect-string=" + server.connectString(),
                        "disco.zookeeper.connection-timeout=1s",
                        "disco.session.ttl=5s",
                        "disco.zookeeper.ssl.enabled=true");
    }

    @Test
    void mutualTlsWithTheTrustStoreOfTheServersCaAndTheClientsKeyStore() {
        runner().withPropertyValues(
                        "disco.zookeeper.connection-timeout=10s",
                        "disco.zookeeper.ssl.trust-store.location=" + server.caFile(),
                        "disco.zookeeper.ssl.trust-store.type=PEM",
                        "disco.zookeeper.ssl.key-store.location=" + server.clientStore(),
                        "disco.zookeeper.ssl.key-store.type=PEM")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Disco disco = context.getBean(Disco.class);
                    assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
                    FencedLock lock = disco.lock("/test/boot-zk-tls/" + UUID.randomUUID());
                    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                    lock.unlock();
                });
    }

    /** The handshake fails: the client heals, its problem naming the server and what to check. */
    private static void heals(ApplicationContextRunner runner) {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            DiscoStatus status = context.getBean(Disco.class).status();
            assertThat(status.state()).isEqualTo(DiscoStatus.State.HEALING);
            assertThat(status.lastProblem())
                    .hasValueSatisfying(p ->
                            assertThat(p).contains(server.connectString(), "did not complete ZooKeeper's handshake"));
        });
    }

    @Test
    void withoutTheClientsCertificateTheServerRefusesTheHandshake() {
        heals(runner().withPropertyValues(
                        "disco.zookeeper.ssl.trust-store.location=" + server.caFile(),
                        "disco.zookeeper.ssl.trust-store.type=PEM"));
    }

    @Test
    void aServerCertificateThatTheTrustStoreDoesNotTrustIsRefused() {
        EtcdTls other = EtcdTls.generate(false, "nobody");
        heals(runner().withPropertyValues(
                        "disco.zookeeper.ssl.trust-store.location=" + other.caFile(),
                        "disco.zookeeper.ssl.trust-store.type=PEM",
                        "disco.zookeeper.ssl.key-store.location=" + server.clientStore(),
                        "disco.zookeeper.ssl.key-store.type=PEM"));
    }
}
