package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.IssuedBound;
import io.disco.lock.FencedLock;
import io.disco.micrometer.DiscoMetrics;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.redis.RedisKeys;
import io.disco.provider.redis.RedisOptions;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RedisExtension;
import io.disco.testservers.RedisServer;
import io.disco.testservers.ZooKeeperExtension;
import io.etcd.jetcd.Client;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The Redis side of the auto-configuration (issue 48, item 5), with real {@code redis-server} processes: an
 * application with only Spring Boot's {@code spring.data.redis.host} and {@code port} gets a {@code Disco} on that
 * Redis, a fenced lock with a token, its metrics and an UP {@code disco} health component, and the starter's Lettuce
 * client is shut down after the client ended its session; a Redis cache beside {@code disco.etcd.endpoints} leaves
 * disco on etcd, and {@code disco.redis.*} properties beside etcd's or ZooKeeper's are refused naming each; the
 * application's own {@code RedisClient} is used and never shut down; Sentinel details reach the
 * master through the sentinels; a server without durable tokens ({@code appendfsync everysec}) fails startup naming
 * the setting and the opt-out, whatever {@code disco.fail-fast}; an unreachable one heals, or with
 * {@code disco.fail-fast=true} fails with the endpoint and the cause.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisAutoConfigurationTest {

    @RegisterExtension
    static final RedisExtension REDIS = RedisExtension.sharedServer();

    @RegisterExtension
    static final RedisExtension SENTINELS = RedisExtension.sharedSentinels();

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static final AutoConfigurations ALL = AutoConfigurations.of(
            DataRedisAutoConfiguration.class,
            DiscoAutoConfiguration.class,
            DiscoActuatorAutoConfiguration.class,
            DiscoGuardAutoConfiguration.class,
            HealthContributorAutoConfiguration.class);

    /** Spring Boot's Redis connection to {@code server}: its host and port, nothing else. */
    private static String[] bootRedis(RedisServer server) {
        return new String[] {"spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port()};
    }

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(ALL);
    }

    /** A token of a real hold of {@code name}, released at once. */
    private static FencingToken token(Disco disco, String name) {
        FencedLock lock = disco.lock(name);
        lock.lock();
        try {
            return lock.token();
        } finally {
            lock.unlock();
        }
    }

    /** The connections the server has now. */
    private static long connections(RedisClient admin) {
        try (StatefulRedisConnection<String, String> c = admin.connect()) {
            return c.sync().clientList().lines().count() - 1; // this one
        }
    }

    @Test
    void onlyBootsRedisHostAndPortGiveAFencedLockAndAnUpHealthComponent() {
        RedisClient admin = RedisClient.create(REDIS.uri());
        try {
            long before = connections(admin);
            String name = "/test/boot-redis/" + UUID.randomUUID();
            AtomicReference<AbstractRedisClient> built = new AtomicReference<>();
            runner().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withPropertyValues(bootRedis(REDIS.server()))
                    .run(context -> {
                        assertThat(context)
                                .hasNotFailed()
                                .hasSingleBean(Disco.class)
                                .hasSingleBean(RedisOptions.class)
                                .hasSingleBean(DiscoLifecycle.class)
                                .hasBean("discoRedisClient")
                                .doesNotHaveBean(Client.class)
                                .doesNotHaveBean(EtcdOptions.class)
                                .doesNotHaveBean(CuratorFramework.class)
                                .doesNotHaveBean(IssuedBound.class);
                        built.set(context.getBean("discoRedisClient", AbstractRedisClient.class));
                        assertThat(built.get()).isInstanceOf(RedisClient.class);
                        RedisOptions options = context.getBean(RedisOptions.class);
                        assertThat(options.ttl()).isEqualTo(Duration.ofSeconds(30));
                        assertThat(options.listeners()).contains(context.getBean(DiscoMetrics.class));

                        Disco disco = context.getBean(Disco.class);
                        assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
                        FencingToken first = token(disco, name);
                        FencingToken second = token(disco, name);
                        assertThat(first.value()).isPositive();
                        assertThat(second.value()).isGreaterThan(first.value());

                        Health health =
                                context.getBean(DiscoHealthIndicator.class).health();
                        assertThat(health.getStatus().getCode()).isEqualTo("UP");
                        assertThat(health.getDetails())
                                .containsEntry("lease", disco.status().owner().orElseThrow())
                                .containsEntry("ttl", "PT30S")
                                .containsEntry("state", "UP");
                        assertThat(health.getDetails().get("remainingValidity")).isNotEqualTo("PT0S");
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        await().atMost(Duration.ofSeconds(10))
                                .until(() -> meters.find("disco.acquisitions")
                                                .tag("outcome", "acquired")
                                                .timer()
                                        != null);
                        assertThat(connections(admin)).isGreaterThan(before);
                    });
            // the client ended its session, then the context shut the starter's Lettuce client down: every
            // connection is gone, and so is every key the session had
            assertThat(connections(admin)).isEqualTo(before);
            try (StatefulRedisConnection<String, String> c = admin.connect()) {
                assertThat(c.sync().keys(RedisKeys.prefix(name) + "c:*")).isEmpty();
            }
        } finally {
            admin.shutdown();
        }
    }

    @Test
    void aRedisCacheBesideDiscoEtcdEndpointsStaysOnEtcd() {
        runner().withPropertyValues(bootRedis(REDIS.server()))
                .withPropertyValues("disco.etcd.endpoints="
                        + String.join(",", ETCD.cluster().endpoints()))
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(EtcdOptions.class)
                            .hasSingleBean(Client.class)
                            .doesNotHaveBean(RedisOptions.class)
                            .doesNotHaveBean("discoRedisClient");
                    Disco disco = context.getBean(Disco.class);
                    assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
                    assertThat(token(disco, "/test/boot-redis-cache/" + UUID.randomUUID())
                                    .value())
                            .isPositive();
                });
        // switched off: the Redis connection stays the application's, and disco is on etcd's default endpoints
        runner().withPropertyValues(bootRedis(REDIS.server()))
                .withPropertyValues("disco.redis.enabled=false", "disco.etcd.request-timeout=300ms")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(EtcdOptions.class);
                    assertThat(context.getBean(EtcdConnectionDetails.class).endpoints())
                            .containsExactly("http://127.0.0.1:2379");
                });
    }

    @Test
    void theApplicationsOwnRedisClientIsUsedAndNeverShutDown() {
        RedisClient own = RedisClient.create();
        try {
            runner().withBean("myRedis", RedisClient.class, () -> own, d -> d.setDestroyMethodName(""))
                    .withPropertyValues(bootRedis(REDIS.server()))
                    .run(context -> {
                        assertThat(context)
                                .hasNotFailed()
                                .doesNotHaveBean("discoRedisClient")
                                .hasSingleBean(AbstractRedisClient.class);
                        assertThat(token(context.getBean(Disco.class), "/test/boot-redis-own/" + UUID.randomUUID())
                                        .value())
                                .isPositive();
                    });
            try (StatefulRedisConnection<String, String> c =
                    own.connect(io.lettuce.core.RedisURI.create(REDIS.uri()))) {
                assertThat(c.sync().ping()).as("not shut down by disco").isEqualTo("PONG");
            }
        } finally {
            own.shutdown();
        }
    }

    @Test
    void sentinelDetailsReachTheMasterThroughTheSentinels() {
        String nodes = SENTINELS.sentinels().sentinels().stream()
                .map(a -> a.host() + ":" + a.port())
                .collect(Collectors.joining(","));
        runner().withPropertyValues(
                        "spring.data.redis.sentinel.master="
                                + SENTINELS.sentinels().masterName(),
                        "spring.data.redis.sentinel.nodes=" + nodes)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Disco disco = context.getBean(Disco.class);
                    assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
                    String name = "/test/boot-redis-sentinel/" + UUID.randomUUID();
                    FencingToken first = token(disco, name);
                    assertThat(token(disco, name).value()).isGreaterThan(first.value());
                    assertThat(context.getBean(DiscoHealthIndicator.class)
                                    .health()
                                    .getStatus()
                                    .getCode())
                            .isEqualTo("UP");
                });
    }

    @Test
    void redisPropertiesBesideEtcdOrZooKeeperAreRefusedNamingRedis() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DiscoAutoConfiguration.class))
                .withPropertyValues("disco.etcd.endpoints=" + etcdEndpoints(), "disco.redis.replica-acks=0")
                .run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new TwoBackendsFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).as("" + context.getStartupFailure()).isNotNull();
                    assertThat(analysis.getDescription())
                            .contains(
                                    "disco is configured for two backends at once",
                                    "etcd: disco.etcd.endpoints=" + etcdEndpoints(),
                                    "Redis: disco.redis.replica-acks=0");
                    assertThat(analysis.getAction()).contains("disco.etcd.enabled=false", "disco.redis.enabled=false");
                });
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DiscoAutoConfiguration.class))
                .withPropertyValues(
                        "disco.zookeeper.connect-string=" + ZK.connectString(),
                        "disco.redis.unsafe-without-durable-tokens=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(new TwoBackendsFailureAnalyzer()
                                    .analyze(context.getStartupFailure())
                                    .getDescription())
                            .contains(
                                    "ZooKeeper: disco.zookeeper.connect-string=" + ZK.connectString(),
                                    "Redis: disco.redis.unsafe-without-durable-tokens=true");
                });
    }

    private static String etcdEndpoints() {
        return String.join(",", ETCD.cluster().endpoints());
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Test
    void aServerWithoutDurableTokensFailsStartupNamingTheSettingAndTheOptOut(CapturedOutput output) {
        try (RedisServer everysec = RedisServer.start(Map.of("appendfsync", "everysec"))) {
            // disco.fail-fast is false (the default): a refusal is not an outage, and fails startup all the same
            runner().withPropertyValues(bootRedis(everysec)).run(context -> {
                assertThat(context).hasFailed();
                FailureAnalysis analysis = new DiscoStartupFailureAnalyzer().analyze(context.getStartupFailure());
                assertThat(analysis).isNotNull();
                assertThat(analysis.getDescription())
                        .contains(
                                "The disco client does not start on Redis",
                                "Redis: " + everysec.host() + ":" + everysec.port(),
                                "appendfsync everysec");
                assertThat(analysis.getAction())
                        .contains(
                                "appendfsync always",
                                "disco.redis.unsafe-without-durable-tokens=true",
                                "disco.redis.persistence-checked-elsewhere=true");
            });
            // a real application prints Boot's report, not a stack trace
            assertThrows(
                    Throwable.class,
                    () -> new SpringApplicationBuilder(App.class)
                            .web(WebApplicationType.NONE)
                            .properties("spring.main.banner-mode=off")
                            .properties(bootRedis(everysec))
                            .run()
                            .close());
            assertThat(output.getOut())
                    .contains(
                            "APPLICATION FAILED TO START",
                            "appendfsync everysec",
                            "disco.redis.unsafe-without-durable-tokens")
                    .doesNotContain("Application run failed");
            // opted out, explicitly: it starts
            runner().withPropertyValues(bootRedis(everysec))
                    .withPropertyValues("disco.redis.unsafe-without-durable-tokens=true")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(token(context.getBean(Disco.class), "/test/boot-redis-unsafe")
                                        .value())
                                .isPositive();
                    });
        }
    }

    /** A port on 127.0.0.1 nothing listens on: one the system handed out and that was closed again. */
    private static int nobodyListens() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Test
    void unreachableItHealsOrWithFailFastFailsNamingTheEndpointAndTheCause() throws IOException {
        int port = nobodyListens();
        String[] nowhere = {"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port};
        runner().withPropertyValues(nowhere)
                .withPropertyValues("disco.fail-fast=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    FailureAnalysis analysis = new DiscoStartupFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription())
                            .contains(
                                    "The disco client could not get its session from Redis at startup",
                                    "Redis: 127.0.0.1:" + port,
                                    "refused");
                    assertThat(analysis.getAction())
                            .contains("Start Redis there", "spring.data.redis.host", "set disco.fail-fast=false");
                });
        runner().withPropertyValues(nowhere).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Disco.class).status().state()).isEqualTo(DiscoStatus.State.HEALING);
            Health health = context.getBean(DiscoHealthIndicator.class).health();
            assertThat(health.getStatus().getCode()).isEqualTo("DOWN");
            assertThat(String.valueOf(health.getDetails().get("lastProblem"))).contains("127.0.0.1:" + port);
        });
    }

    /** A property out of range, or disco on Redis without a Redis connection: startup fails saying so. */
    private static void fails(ApplicationContextRunner runner, String expected) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            StringBuilder messages = new StringBuilder();
            for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains(expected);
        });
    }

    @Test
    void propertyErrorsAndAMissingConnectionFailStartupSayingWhat() {
        fails(
                runner().withPropertyValues(bootRedis(REDIS.server()))
                        .withPropertyValues("disco.redis.replica-acks=17"),
                "disco.redis.replica-acks must be from 0 to 16, got 17");
        fails(
                runner().withPropertyValues(bootRedis(REDIS.server())).withPropertyValues("disco.session.ttl=2h"),
                "must be at most PT1H on Redis");
        fails(
                runner().withPropertyValues(bootRedis(REDIS.server()))
                        .withPropertyValues("disco.session.ttl=3s", "disco.redis.grant-ack-timeout=3s"),
                "disco.redis.grant-ack-timeout (PT3S) must be shorter than disco.session.ttl (PT3S)");
        fails(
                new ApplicationContextRunner()
                        .withConfiguration(AutoConfigurations.of(DiscoAutoConfiguration.class))
                        .withPropertyValues("disco.redis.replica-acks=0"),
                "the application has no Redis connection: add spring-boot-starter-data-redis");
    }
}
