package io.disco.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.context.IntegrationContextUtils;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.dsl.Pollers;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.SmartLifecycleRoleController;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's leader election on the registry, in two application contexts as two instances of
 * a service would run (each its own jetcd client and disco client, so its own lease): one leads and its
 * role's endpoint polls; its lease revoked from outside, it gets {@link OnRevokedEvent} and the other
 * {@link OnGrantedEvent} within 2 s, the endpoint stops on the one and starts on the other, and the new
 * term's token is greater. The initiator keeps Spring's default heartbeat (500 ms).
 */
class LeaderInitiatorTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    static final String ROLE = "cluster";

    /** What one instance saw. */
    static final class Instance {
        final List<Object[]> events = new CopyOnWriteArrayList<>(); // {event class, nanoTime}
        final List<FencingToken> terms = new CopyOnWriteArrayList<>();
        final AtomicInteger polls = new AtomicInteger();
        AnnotationConfigApplicationContext context;

        boolean leads() {
            return context.getBean(LockRegistryLeaderInitiator.class)
                    .getContext()
                    .isLeader();
        }

        SmartLifecycleRoleController roles() {
            return context.getBean(
                    IntegrationContextUtils.INTEGRATION_LIFECYCLE_ROLE_CONTROLLER, SmartLifecycleRoleController.class);
        }

        long firstAfter(Class<?> type, long since) {
            return events.stream()
                    .filter(e -> e[0] == type && (long) e[1] >= since)
                    .mapToLong(e -> (long) e[1])
                    .min()
                    .orElse(-1);
        }
    }

    @Configuration
    @EnableIntegration
    static class LeaderConfig {

        @Bean
        DiscoLockRegistry lockRegistry(Disco disco, String prefix) {
            return new DiscoLockRegistry(disco, prefix);
        }

        @Bean
        LockRegistryLeaderInitiator leaderInitiator(DiscoLockRegistry registry, Instance instance) {
            return new LockRegistryLeaderInitiator(
                    registry, new DefaultCandidate(UUID.randomUUID().toString(), ROLE) {
                        @Override
                        public void onGranted(Context ctx) {
                            // on the initiator's thread, the one that holds the lock: the term's token
                            instance.terms.add(registry.obtain(ROLE).token());
                        }
                    });
        }

        @Bean
        ApplicationListener<AbstractLeaderEvent> leaderEvents(Instance instance) {
            return event -> instance.events.add(new Object[] {event.getClass(), System.nanoTime()});
        }

        /** The role-controlled endpoint: a poller that runs only while this instance leads. */
        @Bean
        IntegrationFlow leaderOnlyWork(Instance instance) {
            return IntegrationFlow.fromSupplier(
                            () -> "tick",
                            e -> e.poller(Pollers.fixedDelay(Duration.ofMillis(50)))
                                    .role(ROLE)
                                    .autoStartup(false))
                    .handle(message -> instance.polls.incrementAndGet())
                    .get();
        }
    }

    private static Instance start(Client client, String prefix) {
        Instance instance = new Instance();
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(Instance.class, () -> instance);
        context.registerBean("prefix", String.class, () -> prefix);
        context.registerBean(Disco.class, () -> Etcd.disco(client));
        context.register(LeaderConfig.class);
        context.refresh();
        instance.context = context;
        return instance;
    }

    @Test
    void theLeadersLeaseRevokedMovesTheLeadershipAndItsEndpointWithin2s() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("leader-initiator");
        try (Client clientA = EtcdClaims.client(ETCD.cluster());
                Client clientB = EtcdClaims.client(ETCD.cluster());
                Client admin = EtcdClaims.client(ETCD.cluster())) {
            Instance a = start(clientA, prefix);
            Instance b = start(clientB, prefix);
            try {
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> a.leads() != b.leads()
                                && (a.leads() ? a : b).roles().allEndpointsRunning(ROLE));
                Instance leader = a.leads() ? a : b;
                Instance follower = leader == a ? b : a;
                assertTrue(follower.roles().noEndpointsRunning(ROLE), "the follower's endpoint is stopped");
                int polled = leader.polls.get();
                await().atMost(Duration.ofSeconds(5)).until(() -> leader.polls.get() > polled + 2);
                assertEquals(0, follower.polls.get(), "the follower never polled");
                FencingToken firstTerm = leader.terms.get(0);

                long revoked = System.nanoTime();
                EtcdClaims.revokeTheHolder(ETCD.cluster(), admin, prefix + "/" + ROLE);

                await().atMost(Duration.ofSeconds(5))
                        .until(() -> leader.firstAfter(OnRevokedEvent.class, revoked) > 0
                                && follower.firstAfter(OnGrantedEvent.class, revoked) > 0);
                long revokedAfter =
                        TimeUnit.NANOSECONDS.toMillis(leader.firstAfter(OnRevokedEvent.class, revoked) - revoked);
                long grantedAfter =
                        TimeUnit.NANOSECONDS.toMillis(follower.firstAfter(OnGrantedEvent.class, revoked) - revoked);
                assertTrue(revokedAfter < 2000, "OnRevokedEvent " + revokedAfter + " ms after the revoke");
                assertTrue(grantedAfter < 2000, "OnGrantedEvent " + grantedAfter + " ms after the revoke");

                await().atMost(Duration.ofSeconds(2))
                        .until(() -> follower.roles().allEndpointsRunning(ROLE)
                                && leader.roles().noEndpointsRunning(ROLE));
                assertTrue(follower.leads() && !leader.leads());
                int polledByNewLeader = follower.polls.get();
                await().atMost(Duration.ofSeconds(5)).until(() -> follower.polls.get() > polledByNewLeader + 2);
                FencingToken secondTerm = follower.terms.get(0);
                assertTrue(secondTerm.isNewerThan(firstTerm), firstTerm + " then " + secondTerm);
                System.out.printf(
                        "revoked after %d ms, granted after %d ms; terms %s then %s%n",
                        revokedAfter, grantedAfter, firstTerm, secondTerm);
            } finally {
                a.context.close();
                b.context.close();
            }
        }
    }
}
