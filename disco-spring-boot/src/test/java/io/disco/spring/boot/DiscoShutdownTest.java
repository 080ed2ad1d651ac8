package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.election.LeadershipRunner;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Graceful shutdown in order (issue 31, item 4): two instances of one application campaign in one
 * election and take one lock; the leader, which also holds the lock, shuts down gracefully, and the other
 * leads and gets the lock within 1 s (the TTL is 10 s: without the shutdown's step-down and revoke it
 * would wait for the lease to expire). When its task is told to stop, the leader's client still has its
 * lease: leaderships step down before the client closes. On etcd ({@link DiscoShutdownOnEtcdTest}), on
 * ZooKeeper ({@link DiscoShutdownOnZooKeeperTest}, where the session ends instead of the lease) and on Redis
 * ({@link DiscoShutdownOnRedisTest}: its session's claims are deleted): each makes its
 * leadership runner bean as its backend does.
 */
abstract class DiscoShutdownTest {

    /** @return the application: a {@code LeadershipRunner} bean campaigning with {@link #leaderOptions} */
    abstract Class<?> app();

    /** @return the properties that put the application on the backend */
    abstract String[] backendProperties();

    /** Per instance: when it began to lead, and the client's state when its term ended. */
    static final Map<String, CompletableFuture<Long>> LED = new ConcurrentHashMap<>();

    static final Map<String, CompletableFuture<DiscoStatus.State>> CLIENT_AT_STEP_DOWN = new ConcurrentHashMap<>();

    /**
     * The leader's task of instance {@code me}: records when it began to lead and, when its term ends, the state
     * of the instance's client.
     */
    static LeadershipRunner.Options leaderOptions(String me, ObjectProvider<Disco> disco) {
        return LeadershipRunner.Options.of(me, term -> {
            LED.get(me).complete(System.nanoTime());
            try {
                term.ended().toCompletableFuture().get();
            } finally {
                CLIENT_AT_STEP_DOWN.get(me).complete(disco.getObject().status().state());
            }
        });
    }

    private ConfigurableApplicationContext start(String instance, String election) {
        LED.put(instance, new CompletableFuture<>());
        CLIENT_AT_STEP_DOWN.put(instance, new CompletableFuture<>());
        return new SpringApplicationBuilder(app())
                .web(WebApplicationType.NONE)
                .properties(backendProperties())
                .properties(
                        "disco.session.ttl=10s",
                        "test.instance=" + instance,
                        "test.election=" + election,
                        "spring.main.banner-mode=off")
                .run();
    }

    @Test
    void theLeaderShutsDownGracefullyAndTheOtherLeadsWithinOneSecond() throws Exception {
        String election = "/test/boot-shutdown/" + UUID.randomUUID();
        String lockName = "/test/boot-shutdown-lock/" + UUID.randomUUID();
        try (ConfigurableApplicationContext a = start("a", election)) {
            LED.get("a").get(30, TimeUnit.SECONDS);
            Disco aClient = a.getBean(Disco.class);
            FencedLock held = aClient.lock(lockName);
            held.lock(); // held by this thread through a's client until a shuts down
            try (ConfigurableApplicationContext b = start("b", election)) {
                FencedLock wanted = b.getBean(Disco.class).lock(lockName);
                CompletableFuture<Long> bGotTheLock = CompletableFuture.supplyAsync(() -> {
                    try {
                        return wanted.tryLock(20, TimeUnit.SECONDS) ? System.nanoTime() : -1L;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(LED.get("b")).isNotDone();

                long shutdown = System.nanoTime();
                a.close();
                long bLed = LED.get("b").get(20, TimeUnit.SECONDS);
                long bLocked = bGotTheLock.get(20, TimeUnit.SECONDS);

                assertThat(CLIENT_AT_STEP_DOWN.get("a").get(1, TimeUnit.SECONDS))
                        .isEqualTo(DiscoStatus.State.UP);
                assertThat(Duration.ofNanos(bLed - shutdown))
                        .as("b leads after a's graceful shutdown")
                        .isLessThan(Duration.ofSeconds(1));
                assertThat(bLocked).isPositive();
                assertThat(Duration.ofNanos(bLocked - shutdown))
                        .as("b gets the lock a held")
                        .isLessThan(Duration.ofSeconds(1));
                assertThat(aClient.status().state()).isEqualTo(DiscoStatus.State.CLOSED);
            }
        }
    }
}
