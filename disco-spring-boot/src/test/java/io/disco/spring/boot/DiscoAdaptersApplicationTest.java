package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.disco.client.Disco;
import io.disco.client.Holding;
import io.disco.fencing.FencingToken;
import io.disco.shedlock.SchedulerLockToken;
import io.disco.spring.integration.DiscoLeaderContext;
import io.disco.spring.integration.DiscoLock;
import io.disco.spring.scheduling.CurrentTerm;
import io.disco.spring.scheduling.LeaderOnly;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * One application on a real backend with every adapter auto-configured (issue 32; on every backend, issue 47): a
 * ShedLock job and a {@code @LeaderOnly} job run with their tokens, a role's initiator publishes its grant with the
 * term's token, the lock registry's lock has its token; and when the context closes, each adapter has let go
 * (ShedLock's lockAtLeastFor hold included) before {@link DiscoLifecycle} closes the client. On etcd
 * ({@link DiscoAdaptersApplicationOnEtcdTest}), on ZooKeeper ({@link DiscoAdaptersApplicationOnZooKeeperTest}) and on
 * Redis ({@link DiscoAdaptersApplicationOnRedisTest}), the backend chosen by properties alone.
 */
abstract class DiscoAdaptersApplicationTest {

    /** @return the properties that put the application on the backend */
    abstract String[] backendProperties();

    /** @return the auto-configurations the backend's properties need (Spring Boot's Redis one, on Redis); none */
    Class<?>[] backendAutoConfigurations() {
        return new Class<?>[0];
    }

    static final String BASE = "/boot-adapters/" + UUID.randomUUID();

    /** What happened, in order: runs with their tokens, the role's events, the client's close. */
    static final Queue<String> EVENTS = new ConcurrentLinkedQueue<>();

    static final Queue<FencingToken> SHED_TOKENS = new ConcurrentLinkedQueue<>();
    static final Queue<FencingToken> LEADER_TOKENS = new ConcurrentLinkedQueue<>();
    /** The client's holdings when its close was first called. */
    static volatile List<Holding> heldAtClose;

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
    static class App {

        @Bean
        ThreadPoolTaskScheduler taskScheduler() {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setPoolSize(2);
            return scheduler;
        }

        /** The client, observed: its holdings when closed. */
        @Bean
        static BeanPostProcessor closeRecorder() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) {
                    if (!(bean instanceof Disco disco)) {
                        return bean;
                    }
                    return Proxy.newProxyInstance(
                            Disco.class.getClassLoader(), new Class<?>[] {Disco.class}, (proxy, method, args) -> {
                                if (method.getName().equals("close") && heldAtClose == null) {
                                    heldAtClose = disco.holdings();
                                    EVENTS.add("client closed");
                                }
                                try {
                                    return method.invoke(disco, args);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                }
            };
        }

        @Bean
        Jobs jobs() {
            return new Jobs();
        }
    }

    static class Jobs {
        /** Kept by lockAtLeastFor after its one run, until the provider lets go. */
        @Scheduled(fixedRate = 100)
        @SchedulerLock(name = "sweep", lockAtLeastFor = "PT30S")
        public void sweep() {
            SHED_TOKENS.add(SchedulerLockToken.current());
        }

        @Scheduled(fixedRate = 100)
        @LeaderOnly("/boot-adapters/report")
        public void report() {
            LEADER_TOKENS.add(CurrentTerm.token());
        }

        @EventListener
        public void granted(OnGrantedEvent event) {
            EVENTS.add("granted " + event.getRole() + " "
                    + ((DiscoLeaderContext) event.getContext()).token().value());
        }

        @EventListener
        public void revoked(OnRevokedEvent event) {
            EVENTS.add("revoked " + event.getRole());
        }
    }

    /** The record is static (the application's beans write it): each class starts it empty. */
    @BeforeEach
    void nothingHappenedYet() {
        EVENTS.clear();
        SHED_TOKENS.clear();
        LEADER_TOKENS.clear();
        heldAtClose = null;
    }

    @Test
    void theAdaptersRunWithTheirTokensAndLetGoBeforeTheClientCloses() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        DiscoAutoConfiguration.class,
                        DiscoShedLockAutoConfiguration.class,
                        DiscoLeaderOnlyAutoConfiguration.class,
                        DiscoIntegrationAutoConfiguration.class))
                .withConfiguration(AutoConfigurations.of(backendAutoConfigurations()))
                .withUserConfiguration(App.class)
                .withPropertyValues(backendProperties())
                .withPropertyValues(
                        "disco.session.ttl=5s",
                        "disco.shedlock.prefix=" + BASE + "/shedlock",
                        "disco.integration.lock-registry.prefix=" + BASE + "/locks",
                        "disco.integration.leader.roles.orders=" + BASE + "/orders")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Disco disco = context.getBean(Disco.class);
                    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
                        assertThat(SHED_TOKENS).isNotEmpty();
                        assertThat(LEADER_TOKENS).hasSizeGreaterThanOrEqualTo(2);
                        assertThat(EVENTS).anyMatch(e -> e.startsWith("granted orders "));
                    });
                    List<Holding> held = disco.holdings();
                    FencingToken shed = SHED_TOKENS.peek();
                    assertThat(held)
                            .filteredOn(h -> h.name().equals(BASE + "/shedlock/sweep"))
                            .singleElement()
                            .satisfies(h -> assertThat(h.token()).contains(shed));
                    FencingToken term = LEADER_TOKENS.peek();
                    assertThat(LEADER_TOKENS)
                            .as("one term: every run has its token")
                            .containsOnly(term);
                    assertThat(held)
                            .filteredOn(h -> h.name().equals("/boot-adapters/report"))
                            .singleElement()
                            .satisfies(h -> assertThat(h.token()).contains(term));
                    String granted = EVENTS.stream()
                            .filter(e -> e.startsWith("granted orders "))
                            .findFirst()
                            .orElseThrow();
                    assertThat(held)
                            .filteredOn(h -> h.name().equals(BASE + "/orders"))
                            .singleElement()
                            .satisfies(h -> assertThat("granted orders "
                                            + h.token().orElseThrow().value())
                                    .isEqualTo(granted));

                    @SuppressWarnings("unchecked")
                    LockRegistry<DiscoLock> registry = context.getBean(LockRegistry.class);
                    DiscoLock lock = registry.obtain("k");
                    lock.lock();
                    try {
                        assertThat(disco.holdings())
                                .filteredOn(h -> h.name().equals(BASE + "/locks/k"))
                                .singleElement()
                                .satisfies(h -> assertThat(h.token()).contains(lock.token()));
                    } finally {
                        lock.unlock();
                    }
                });
        assertThat(heldAtClose)
                .as("what the client still held when DiscoLifecycle closed it")
                .isEmpty();
        assertThat(List.copyOf(EVENTS))
                .as("the role revoked before the client closed")
                .containsSubsequence("revoked orders", "client closed");
    }
}
