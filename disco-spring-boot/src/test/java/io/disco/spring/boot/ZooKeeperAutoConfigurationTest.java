package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.core.ClaimMetadata;
import io.disco.core.Primitive;
import io.disco.fencing.guard.IssuedBound;
import io.disco.lock.FencedLock;
import io.disco.micrometer.DiscoMetrics;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.zookeeper.ZooKeeperIssuedBound;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperProvider;
import io.disco.testservers.ZooKeeperExtension;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The ZooKeeper side of the auto-configuration (issue 47, item 1), against the in-process server: the
 * {@code CuratorFramework}, the sessions' options and the client from {@code disco.zookeeper.*} and
 * {@code disco.session.*}; an application's own {@code CuratorFramework} used as it is and never closed; every
 * property error; metrics, health with the session's remaining validity, the guard's ZooKeeper bound;
 * authentication and TLS handed to the ZooKeeper client as it takes them.
 */
class ZooKeeperAutoConfigurationTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static final AutoConfigurations ALL = AutoConfigurations.of(
            DiscoAutoConfiguration.class,
            DiscoActuatorAutoConfiguration.class,
            DiscoGuardAutoConfiguration.class,
            DiscoGrpcGuardAutoConfiguration.class);

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues("disco.zookeeper.connect-string=" + ZK.connectString(), "disco.session.ttl=5s");
    }

    private static long sessionOf(CuratorFramework client) throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    /** A started client of the test server, as an application builds its own. */
    private static CuratorFramework applicationsOwnClient() {
        CuratorFramework client =
                CuratorFrameworkFactory.newClient(ZK.connectString(), 6_000, 5_000, new RetryNTimes(3, 100));
        client.start();
        return client;
    }

    /** A property out of range fails startup with the property's name and what it must be. */
    private void fails(String[] properties, String expected) {
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withPropertyValues(properties)
                .run(context -> {
                    assertThat(context).hasFailed();
                    StringBuilder messages = new StringBuilder();
                    for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                        messages.append(t.getMessage()).append('\n');
                    }
                    assertThat(messages.toString()).contains(expected);
                });
    }

    private void fails(String property, String expected) {
        fails(new String[] {"disco.zookeeper.connect-string=" + ZK.connectString(), property}, expected);
    }

    @Test
    void theCuratorFrameworkTheOptionsAndTheClientFromProperties() {
        AtomicReference<CuratorFramework> built = new AtomicReference<>();
        runner().withPropertyValues(
                        "disco.client-id=orders-1",
                        "disco.zookeeper.session-timeout=4s",
                        "disco.zookeeper.connection-timeout=5s",
                        "disco.zookeeper.request-timeout=3s")
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(CuratorFramework.class)
                            .hasBean("discoCuratorFramework")
                            .hasSingleBean(Disco.class)
                            .hasSingleBean(DiscoLifecycle.class)
                            .doesNotHaveBean(Client.class)
                            .doesNotHaveBean(EtcdOptions.class)
                            .doesNotHaveBean(DiscoMetrics.class);
                    assertThat(context.getBean(IssuedBound.class)).isInstanceOf(ZooKeeperIssuedBound.class);
                    ZooKeeperOptions options = context.getBean(ZooKeeperOptions.class);
                    assertThat(options.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(options.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(options.clientId()).isEqualTo("orders-1");
                    assertThat(options.ownerWait()).contains(Duration.ofSeconds(4));

                    CuratorFramework curator = context.getBean(CuratorFramework.class);
                    built.set(curator);
                    assertThat(curator.getState()).isEqualTo(CuratorFrameworkState.STARTED);
                    Disco disco = context.getBean(Disco.class);
                    DiscoStatus status = disco.status();
                    assertThat(status.state()).isEqualTo(DiscoStatus.State.UP);
                    assertThat(status.ttl())
                            .as("the negotiated session timeout")
                            .isEqualTo(Duration.ofSeconds(4));
                    assertThat(status.owner()).contains(Long.toHexString(sessionOf(curator)));

                    String name = "/test/boot-zk/" + UUID.randomUUID();
                    FencedLock lock = disco.lock(name);
                    lock.lock();
                    try {
                        assertThat(disco.claimants(Primitive.LOCK, name))
                                .singleElement()
                                .satisfies(c -> assertThat(c.madeByDisco().map(ClaimMetadata::clientId))
                                        .contains("orders-1"));
                    } finally {
                        lock.unlock();
                    }
                });
        assertThat(built.get().getState())
                .as("the starter's own client, closed with the context")
                .isEqualTo(CuratorFrameworkState.STOPPED);
    }

    @Test
    void theSessionTimeoutIsTheTtlUnlessSetApartAndTheOwnerWaitItsOwn() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Disco.class).status().ttl()).isEqualTo(Duration.ofSeconds(5));
            assertThat(context.getBean(ZooKeeperOptions.class).ownerWait()).contains(Duration.ofSeconds(5));
        });
        runner().withPropertyValues("disco.session.owner-wait=1500ms")
                .run(context -> assertThat(
                                context.getBean(ZooKeeperOptions.class).ownerWait())
                        .contains(Duration.ofMillis(1500)));
    }

    @Test
    void anApplicationsCuratorFrameworkIsUsedAsItIsAndNeverClosed() throws Exception {
        CuratorFramework own = applicationsOwnClient();
        try {
            String name = "/test/boot-zk-own/" + UUID.randomUUID();
            AtomicReference<String> node = new AtomicReference<>();
            new ApplicationContextRunner()
                    .withConfiguration(ALL)
                    // its own bean, not closed by the context: only disco could close it here
                    .withBean("myCurator", CuratorFramework.class, () -> own, d -> d.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context)
                                .hasNotFailed()
                                .hasSingleBean(CuratorFramework.class)
                                .doesNotHaveBean("discoCuratorFramework")
                                .doesNotHaveBean(Client.class);
                        Disco disco = context.getBean(Disco.class);
                        assertThat(disco.status().owner()).contains(Long.toHexString(sessionOf(own)));
                        assertThat(context.getBean(IssuedBound.class)).isInstanceOf(ZooKeeperIssuedBound.class);
                        FencedLock held = disco.lock(name);
                        held.lock(); // left held: the shutdown releases it
                        node.set(disco.claimants(Primitive.LOCK, name).get(0).key());
                    });
            assertThat(own.getState()).as("never closed by disco").isEqualTo(CuratorFrameworkState.STARTED);
            assertThat(own.checkExists().forPath(node.get()))
                    .as("the shutdown released the lock, through the application's client")
                    .isNull();
        } finally {
            own.close();
        }
    }

    @Test
    void anApplicationsCuratorFrameworkThatIsNotStartedFailsStartupSayingSo() {
        CuratorFramework latent = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryNTimes(0, 100));
        new ApplicationContextRunner()
                .withConfiguration(ALL)
                .withBean("myCurator", CuratorFramework.class, () -> latent, d -> d.setDestroyMethodName(""))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("is LATENT: start it");
                });
        assertThat(latent.getState()).isEqualTo(CuratorFrameworkState.LATENT);
    }

    @Test
    void invalidPropertiesFailStartupNamingThem(@TempDir Path dir) {
        fails(
                new String[] {"disco.zookeeper.connect-string= "},
                "disco.zookeeper.connect-string must name at least one server and no blank one");
        fails(
                new String[] {"disco.zookeeper.connect-string=zk-0:2181,,zk-1:2181"},
                "disco.zookeeper.connect-string must name at least one server and no blank one");
        fails("disco.zookeeper.session-timeout=0s", "disco.zookeeper.session-timeout must be from PT0.001S to PT24H");
        fails(
                "disco.zookeeper.connection-timeout=11m",
                "disco.zookeeper.connection-timeout must be from PT0.001S to PT10M");
        fails("disco.zookeeper.request-timeout=0s", "disco.zookeeper.request-timeout must be from PT0.001S to PT10M");
        fails("disco.session.ttl=90000s", "disco.session.ttl (PT25H) is the ZooKeeper session timeout");
        fails("disco.zookeeper.auth.scheme=digest", "disco.zookeeper.auth.credentials is not set");
        fails("disco.zookeeper.auth.credentials=app:secret", "disco.zookeeper.auth.scheme is not");
        fails(
                "disco.zookeeper.ssl.trust-store.location=" + dir,
                "disco.zookeeper.ssl.trust-store.location is set but disco.zookeeper.ssl.enabled is false");
        fails(
                new String[] {
                    "disco.zookeeper.connect-string=" + ZK.connectString(),
                    "disco.zookeeper.ssl.enabled=true",
                    "disco.zookeeper.ssl.key-store.location=" + dir.resolve("missing.p12")
                },
                "disco.zookeeper.ssl.key-store.location " + dir.resolve("missing.p12") + " is not a readable file");
    }

    @Test
    void withoutTheZooKeeperProviderTheConnectStringConfiguresNothing() {
        runner().withClassLoader(new FilteredClassLoader(ZooKeeperProvider.class))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(Disco.class)
                        .doesNotHaveBean(CuratorFramework.class)
                        .doesNotHaveBean(Client.class)
                        .doesNotHaveBean(DiscoLifecycle.class));
    }

    @Test
    void metricsListenToTheSessionsAndHealthShowsTheSessionsRemainingValidity() {
        runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withConfiguration(AutoConfigurations.of(HealthContributorAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(DiscoMetrics.class);
                    assertThat(context.getBean(ZooKeeperOptions.class).listeners())
                            .contains(context.getBean(DiscoMetrics.class));
                    Disco disco = context.getBean(Disco.class);
                    FencedLock lock = disco.lock("/test/boot-zk-metrics/" + UUID.randomUUID());
                    lock.lock();
                    lock.unlock();
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> registry.find("disco.acquisitions")
                                                    .tag("outcome", "acquired")
                                                    .timer()
                                            != null
                                    && registry.find("disco.lease.renewals")
                                                    .tag("outcome", "ok")
                                                    .counter()
                                            != null);

                    Health health = context.getBean(DiscoHealthIndicator.class).health();
                    assertThat(health.getStatus().getCode()).isEqualTo("UP");
                    assertThat(health.getDetails().get("lease"))
                            .isEqualTo(Long.toHexString(sessionOf(context.getBean(CuratorFramework.class))));
                    Duration left = Duration.parse((String) health.getDetails().get("remainingValidity"));
                    assertThat(left)
                            .as("2/3 of the 5 s session timeout at most, counted from the newest answered request")
                            .isPositive()
                            .isLessThanOrEqualTo(Duration.ofMillis(3_334));
                });
    }

    /**
     * {@code digest} authentication reaches the server: a node only its creator may read (ZooKeeper's
     * {@code CREATOR_ALL_ACL}, which needs an authenticated identity) is created through the starter's client, and
     * a client without the credentials is refused.
     */
    @Test
    void authenticationIsAddedToTheConnection() throws Exception {
        String path = "/test/boot-zk-auth/" + UUID.randomUUID();
        runner().withPropertyValues("disco.zookeeper.auth.scheme=digest", "disco.zookeeper.auth.credentials=app:secret")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    CuratorFramework curator = context.getBean(CuratorFramework.class);
                    curator.create()
                            .creatingParentsIfNeeded()
                            .withMode(CreateMode.PERSISTENT)
                            .withACL(ZooDefs.Ids.CREATOR_ALL_ACL)
                            .forPath(path, "mine".getBytes());
                    assertThat(new String(curator.getData().forPath(path))).isEqualTo("mine");
                });
        CuratorFramework stranger = applicationsOwnClient();
        try {
            assertThatThrownBy(() -> stranger.getData().forPath(path))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        } finally {
            stranger.close();
        }
    }

    /**
     * TLS goes to the ZooKeeper client as it takes it: its Netty socket, secure, the store files and their passwords
     * and types, host name verification. Against the test server's plaintext port the handshake cannot complete: the
     * client heals, its problem naming the connect string.
     */
    @Test
    void tlsIsHandedToTheZooKeeperClientAsItTakesIt(@TempDir Path dir) throws Exception {
        Path trust = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        Path key = Files.writeString(dir.resolve("client.p12"), "");
        runner().withPropertyValues(
                        "disco.zookeeper.connection-timeout=500ms",
                        "disco.zookeeper.ssl.enabled=true",
                        "disco.zookeeper.ssl.trust-store.location=" + trust,
                        "disco.zookeeper.ssl.trust-store.type=PEM",
                        "disco.zookeeper.ssl.key-store.location=" + key,
                        "disco.zookeeper.ssl.key-store.password=changeit",
                        "disco.zookeeper.ssl.key-store.type=PKCS12",
                        "disco.zookeeper.ssl.hostname-verification=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    ZKClientConfig config = context.getBean(CuratorFramework.class)
                            .getZookeeperClient()
                            .getZooKeeper()
                            .getClientConfig();
                    assertThat(config.getProperty(ZKClientConfig.SECURE_CLIENT)).isEqualTo("true");
                    assertThat(config.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET))
                            .isEqualTo("org.apache.zookeeper.ClientCnxnSocketNetty");
                    assertThat(config.getProperty("zookeeper.ssl.trustStore.location"))
                            .isEqualTo(trust.toString());
                    assertThat(config.getProperty("zookeeper.ssl.trustStore.type"))
                            .isEqualTo("PEM");
                    assertThat(config.getProperty("zookeeper.ssl.keyStore.location"))
                            .isEqualTo(key.toString());
                    assertThat(config.getProperty("zookeeper.ssl.keyStore.password"))
                            .isEqualTo("changeit");
                    assertThat(config.getProperty("zookeeper.ssl.keyStore.type"))
                            .isEqualTo("PKCS12");
                    assertThat(config.getProperty("zookeeper.ssl.hostnameVerification"))
                            .isEqualTo("false");
                    DiscoStatus status = context.getBean(Disco.class).status();
                    assertThat(status.state()).isEqualTo(DiscoStatus.State.HEALING);
                    assertThat(status.lastProblem())
                            .hasValueSatisfying(p -> assertThat(p).contains(ZK.connectString()));
                });
    }
}
