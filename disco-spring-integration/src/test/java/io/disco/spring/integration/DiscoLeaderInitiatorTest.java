package io.disco.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.SmartLifecycleRoleController;

/**
 * {@link DiscoLeaderInitiator} in two application contexts (each its own jetcd and disco client): one leads, its
 * role's endpoint runs, its {@code OnGrantedEvent} carries the term's token; its lease revoked from outside, it
 * gets {@code OnRevokedEvent} and the other {@code OnGrantedEvent} within 2 s with a newer token, and the endpoint
 * moves; {@code yield()} on the new leader's context hands the leadership back.
 */
class DiscoLeaderInitiatorTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    static final String ROLE = "cluster";

    /** What one instance saw: {event, nanoTime}. */
    static final class Instance {
        final List<Object[]> events = new CopyOnWriteArrayList<>();
        AnnotationConfigApplicationContext context;

        boolean leads() {
            return context.getBean(DiscoLeaderInitiator.class).getContext().isLeader();
        }

        boolean endpointRunning() {
            return context.getBean(
                            IntegrationContextUtils.INTEGRATION_LIFECYCLE_ROLE_CONTROLLER,
                            SmartLifecycleRoleController.class)
                    .allEndpointsRunning(ROLE);
        }

        AbstractLeaderEvent firstAfter(Class<?> type, long since) {
            return events.stream()
                    .filter(e -> type.isInstance(e[0]) && (long) e[1] >= since)
                    .map(e -> (AbstractLeaderEvent) e[0])
                    .findFirst()
                    .orElse(null);
        }

        long timeOf(AbstractLeaderEvent event) {
            return events.stream()
                    .filter(e -> e[0] == event)
                    .mapToLong(e -> (long) e[1])
                    .findFirst()
                    .orElseThrow();
        }
    }

    @Configuration
    @EnableIntegration
    static class Config {

        @Bean
        DiscoLeaderInitiator leaderInitiator(Disco disco, String election) {
            return new DiscoLeaderInitiator(disco, election, ROLE);
        }

        @Bean
        ApplicationListener<AbstractLeaderEvent> leaderEvents(Instance instance) {
            return event -> instance.events.add(new Object[] {event, System.nanoTime()});
        }

        @Bean
        IntegrationFlow leaderOnlyWork() {
            return IntegrationFlow.fromSupplier(
                            () -> "tick",
                            e -> e.poller(Pollers.fixedDelay(Duration.ofMillis(50)))
                                    .role(ROLE)
                                    .autoStartup(false))
                    .handle(message -> {})
                    .get();
        }
    }

    private static Instance start(Client client, String election) {
        Instance instance = new Instance();
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(Instance.class, () -> instance);
        context.registerBean("election", String.class, () -> election);
        context.registerBean(Disco.class, () -> Etcd.disco(client), bd -> bd.setDestroyMethodName("close"));
        context.register(Config.class);
        context.refresh();
        instance.context = context;
        return instance;
    }

    private static FencingToken token(AbstractLeaderEvent event) {
        return ((DiscoLeaderContext) event.getContext()).token();
    }

    @Test
    void revokedLeaseMovesTheTermWithANewerTokenWithin2sAndYieldHandsItBack() throws Exception {
        String election = EtcdClaims.uniquePrefix("disco-leader-initiator");
        try (Client clientA = EtcdClaims.client(ETCD.cluster());
                Client clientB = EtcdClaims.client(ETCD.cluster());
                Client admin = EtcdClaims.client(ETCD.cluster())) {
            Instance a = start(clientA, election);
            Instance b = start(clientB, election);
            try {
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> a.leads() != b.leads() && (a.leads() ? a : b).endpointRunning());
                Instance leader = a.leads() ? a : b;
                Instance follower = leader == a ? b : a;
                assertFalse(follower.endpointRunning());
                FencingToken first = token(leader.firstAfter(OnGrantedEvent.class, 0));

                long revoked = System.nanoTime();
                EtcdClaims.revokeTheHolder(ETCD.cluster(), admin, election);
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> leader.firstAfter(OnRevokedEvent.class, revoked) != null
                                && follower.firstAfter(OnGrantedEvent.class, revoked) != null);
                AbstractLeaderEvent revokedEvent = leader.firstAfter(OnRevokedEvent.class, revoked);
                AbstractLeaderEvent grantedEvent = follower.firstAfter(OnGrantedEvent.class, revoked);
                long revokedAfter = TimeUnit.NANOSECONDS.toMillis(leader.timeOf(revokedEvent) - revoked);
                long grantedAfter = TimeUnit.NANOSECONDS.toMillis(follower.timeOf(grantedEvent) - revoked);
                assertTrue(revokedAfter < 2000, "OnRevokedEvent " + revokedAfter + " ms after the revoke");
                assertTrue(grantedAfter < 2000, "OnGrantedEvent " + grantedAfter + " ms after the revoke");
                assertTrue(token(revokedEvent).equals(first), "the revoked term's token");
                FencingToken second = token(grantedEvent);
                assertTrue(second.isNewerThan(first), first + " then " + second);
                await().atMost(Duration.ofSeconds(2))
                        .until(() -> follower.endpointRunning() && !leader.endpointRunning());
                // The revoked instance campaigns again once its client has a new owner: a yield before that finds
                // no other candidate, and the yielder wins the next term itself (as it should). Wait for both keys.
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> EtcdClaims.claims(admin, election).size() == 2);

                long yielded = System.nanoTime();
                grantedEvent.getContext().yield();
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> leader.firstAfter(OnGrantedEvent.class, yielded) != null
                                && follower.firstAfter(OnRevokedEvent.class, yielded) != null);
                FencingToken third = token(leader.firstAfter(OnGrantedEvent.class, yielded));
                assertTrue(third.isNewerThan(second), second + " then " + third);
                await().atMost(Duration.ofSeconds(2))
                        .until(() -> leader.endpointRunning() && !follower.endpointRunning());
                System.out.printf(
                        "revoked after %d ms, granted after %d ms; terms %s, %s, after yield %s%n",
                        revokedAfter, grantedAfter, first, second, third);
            } finally {
                a.context.close();
                b.context.close();
            }
        }
    }
}
