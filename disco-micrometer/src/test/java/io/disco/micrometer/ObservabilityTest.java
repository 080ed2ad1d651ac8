package io.disco.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The session listener and the Micrometer meters against a real etcd, across a lease loss and a recovery. */
class ObservabilityTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** Records "<lease>:<event>" lines. */
    static final class Recorder implements SessionListener {
        final List<String> events = new CopyOnWriteArrayList<>();

        private void add(DiscoSession s, String e) {
            events.add(Long.toHexString(s.leaseId()) + ":" + e);
        }

        @Override
        public void renewed(DiscoSession s, Duration remaining) {
            add(s, "renewed");
        }

        @Override
        public void renewalFailing(DiscoSession s, Duration failingFor, Duration remaining, Throwable cause) {
            add(s, "renewalFailing");
        }

        @Override
        public void lost(DiscoSession s, DiscoException cause) {
            add(s, "lost");
        }

        @Override
        public void closed(DiscoSession s) {
            add(s, "closed");
        }

        @Override
        public void acquired(
                DiscoSession s, String primitive, String name, String key, FencingToken token, Duration waited) {
            add(s, "acquired " + primitive);
        }

        @Override
        public void released(DiscoSession s, String primitive, String name, Duration held) {
            add(s, "released " + primitive);
        }

        @Override
        public void acquisitionFailed(DiscoSession s, String primitive, String name, Throwable cause, Duration waited) {
            add(s, "acquisitionFailed " + primitive);
        }

        @Override
        public void grantLost(DiscoSession s, String primitive, String name, Throwable cause, Duration held) {
            add(s, "grantLost " + primitive);
        }

        List<String> of(DiscoSession s) {
            String p = Long.toHexString(s.leaseId()) + ":";
            return events.stream()
                    .filter(e -> e.startsWith(p))
                    .map(e -> e.substring(p.length()))
                    .filter(e -> !e.equals("renewed") && !e.equals("renewalFailing"))
                    .toList();
        }

        long count(String event) {
            return events.stream().filter(e -> e.endsWith(":" + event)).count();
        }
    }

    /**
     * A client whose connection is up: its first answer is awaited (up to 15 s) before a session with a 1 s
     * request timeout uses it, since a new client's first request outlasted 1 s on 2 loaded cores.
     */
    private static Client client(EtcdCluster etcd) throws Exception {
        Client client = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(2)))
                .build();
        Awaitility.await().atMost(Duration.ofSeconds(15)).ignoreExceptions().until(() -> {
            client.getKVClient()
                    .get(io.etcd.jetcd.ByteSequence.from(
                            "/test/observability/warm-up", java.nio.charset.StandardCharsets.UTF_8))
                    .get(2, TimeUnit.SECONDS);
            return true;
        });
        return client;
    }

    @Test
    void eventsArriveInOrderAcrossALossAndARecoveryAndTheMetersMatchThem() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String name = "/test/observability/" + UUID.randomUUID();
        Recorder recorder = new Recorder();
        MeterRegistry registry = new SimpleMeterRegistry();
        EtcdOptions options = EtcdOptions.builder()
                .ttl(Duration.ofSeconds(2))
                .requestTimeout(Duration.ofSeconds(1))
                .listener(recorder)
                .listener(DiscoMetrics.of(registry))
                .build();
        try (Client client = client(etcd)) {
            EtcdSession first = EtcdSession.open(client, options);
            LockService lock = first.newLock(name);
            lock.lock(Duration.ofSeconds(10));
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> recorder.count("renewed") >= 2);
            assertEquals(EtcdSession.State.ALIVE, first.state());
            assertTrue(first.remainingValidity().toMillis() > 0);
            assertTrue(registry.get("disco.lease.remaining").gauge().value() > 0, "the validity gauge");
            etcd.stopMember(0);
            try {
                first.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(5))
                        .until(() -> recorder.of(first).contains("lost"));
                assertEquals(EtcdSession.State.LOST, first.state());
                assertEquals(Duration.ZERO, first.remainingValidity());
                assertTrue(recorder.count("renewalFailing") >= 1, "failing renewals were told before the loss");
            } finally {
                etcd.startMember(0);
            }
            assertEquals(List.of("acquired lock", "grantLost lock", "lost"), recorder.of(first));
            int lostAt = recorder.events.indexOf(Long.toHexString(first.leaseId()) + ":lost");
            assertTrue(
                    recorder.events.subList(lostAt + 1, recorder.events.size()).stream()
                            .noneMatch(e -> e.startsWith(Long.toHexString(first.leaseId()))),
                    "nothing after the loss");
            lock.close();
            first.close();

            EtcdSession second = EtcdSession.open(client, options);
            try (LockService again = second.newLock(name)) {
                again.lock(Duration.ofSeconds(30));
                again.unlock();
                assertThrows(java.util.concurrent.TimeoutException.class, () -> {
                    try (EtcdSession other = EtcdSession.open(client, options);
                            LockService blocked = other.newLock(name)) {
                        again.lock(Duration.ofSeconds(10));
                        blocked.lock(Duration.ofMillis(200));
                    }
                });
            }
            second.close();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> recorder.of(second).contains("closed"));
            assertEquals(
                    List.of("acquired lock", "released lock", "acquired lock", "released lock", "closed"),
                    recorder.of(second));
        }
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> registry.find("disco.lease.remaining").gauges().isEmpty());
        assertEquals(
                recorder.count("acquired lock"),
                registry.get("disco.acquisitions")
                        .tag("outcome", "acquired")
                        .timer()
                        .count());
        assertEquals(
                recorder.count("acquisitionFailed lock"),
                registry.get("disco.acquisitions")
                        .tag("outcome", "failed")
                        .timer()
                        .count());
        assertEquals(
                recorder.count("released lock"),
                registry.get("disco.holds").tag("outcome", "released").timer().count());
        assertEquals(
                1, registry.get("disco.holds").tag("outcome", "lost").timer().count());
        assertEquals(1.0, registry.get("disco.lease.losses").counter().count());
        assertEquals(
                (double) recorder.count("renewed"),
                registry.get("disco.lease.renewals")
                        .tag("outcome", "ok")
                        .counter()
                        .count());
        assertEquals(
                (double) recorder.count("renewalFailing"),
                registry.get("disco.lease.renewals")
                        .tag("outcome", "failed")
                        .counter()
                        .count());
    }

    @Test
    void aSlowOrThrowingListenerCannotDelayRenewal() throws Exception {
        SessionListener slow = new SessionListener() {
            @Override
            public void renewed(DiscoSession session, Duration remaining) {
                try {
                    Thread.sleep(10_000); // a listener stuck far longer than the TTL
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        SessionListener throwing = new SessionListener() {
            @Override
            public void renewed(DiscoSession session, Duration remaining) {
                throw new IllegalStateException("listener bug");
            }
        };
        try (Client client = client(ETCD.cluster());
                EtcdSession session = EtcdSession.open(
                        client,
                        EtcdOptions.builder()
                                .ttl(Duration.ofSeconds(2))
                                .listener(throwing)
                                .listener(slow)
                                .build())) {
            Awaitility.await()
                    .pollDelay(Duration.ofSeconds(5))
                    .atMost(Duration.ofSeconds(6))
                    .until(() -> true);
            assertFalse(session.done().toCompletableFuture().isDone(), "the lease outlived the stuck listener by far");
            assertEquals(EtcdSession.State.ALIVE, session.state());
            assertTrue(
                    session.remainingValidity().toMillis() > 500,
                    session.remainingValidity().toString());
        }
    }

    @Test
    void guardMetersCountDecisionsAndShowTheMark() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        DiscoMetrics metrics = DiscoMetrics.of(registry);
        Guard guard = Guard.builder()
                .listener(metrics.guard("orders"))
                .drainTimeout(Duration.ofMillis(50))
                .build();
        metrics.highWater("orders", guard);
        guard.check(FencingToken.of(5));
        guard.check(FencingToken.of(5));
        assertThrows(TokenStaleException.class, () -> guard.check(FencingToken.of(4)));
        try (Guard.Admission a = guard.admit(FencingToken.of(6))) {
            assertThrows(io.disco.fencing.guard.DrainTimeoutException.class, () -> guard.admit(FencingToken.of(7)));
        }
        assertEquals(
                3.0,
                registry.get("disco.guard.requests")
                        .tag("outcome", "accepted")
                        .counter()
                        .count());
        assertEquals(
                1.0,
                registry.get("disco.guard.requests")
                        .tag("outcome", "stale")
                        .counter()
                        .count());
        assertEquals(
                1.0,
                registry.get("disco.guard.requests")
                        .tag("outcome", "drain_timeout")
                        .counter()
                        .count());
        assertEquals(
                7.0,
                registry.get("disco.guard.high.water")
                        .tag("resource", "orders")
                        .gauge()
                        .value());
    }
}
