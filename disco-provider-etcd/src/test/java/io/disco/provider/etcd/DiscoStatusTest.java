package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.client.FencedReadWriteLock;
import io.disco.client.Holding;
import io.disco.lock.FencedLock;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a health check and an actuator endpoint read of the client (issue 31, item 3): {@link Disco#status()}
 * and {@link Disco#holdings()}, and a client that starts while etcd is down and heals when it answers.
 */
class DiscoStatusTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static EtcdOptions options() {
        return Etcd.options(2, 1);
    }

    @Test
    void statusAndHoldingsOfALiveClient() throws Exception {
        String name = uniquePrefix("status-lock");
        String rwName = uniquePrefix("status-rw");
        ExecutorService holder = Executors.newSingleThreadExecutor();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        CountDownLatch release = new CountDownLatch(1);
        Instant before = Instant.now();
        try (Client client = Etcd.client(ETCD.cluster());
                Disco disco = EtcdProvider.disco(client, options())) {
            DiscoStatus up = disco.status();
            assertEquals(DiscoStatus.State.UP, up.state());
            assertEquals(Duration.ofSeconds(2), up.ttl());
            assertTrue(
                    up.remainingValidity().compareTo(Duration.ZERO) > 0
                            && up.remainingValidity().compareTo(up.ttl()) <= 0,
                    up.toString());
            assertEquals(List.of(), disco.holdings());

            FencedLock lock = disco.lock(name);
            FencedReadWriteLock rw = disco.readWriteLock(rwName);
            long token = holder.submit(() -> {
                        lock.lock();
                        rw.readLock().lock();
                        return lock.token().value();
                    })
                    .get(10, TimeUnit.SECONDS);
            Future<Boolean> waiting = waiter.submit(() -> {
                FencedLock other = disco.readWriteLock(rwName).writeLock();
                boolean got = other.tryLock(20, TimeUnit.SECONDS);
                release.await();
                other.unlock();
                return got;
            });

            List<Holding> holdings = disco.holdings();
            assertEquals(2, holdings.size(), holdings.toString());
            Holding h = holdings.stream()
                    .filter(x -> x.name().equals(name))
                    .findFirst()
                    .orElseThrow();
            assertEquals("lock", h.primitive());
            assertEquals(Holding.State.HELD, h.state());
            assertEquals(Optional.of(name + "/" + up.owner().orElseThrow()), h.key());
            assertEquals(token, h.token().orElseThrow().value());
            assertTrue(!h.since().isBefore(before.minusMillis(1)), h.toString());
            Holding r = holdings.stream()
                    .filter(x -> x.name().equals(rwName))
                    .findFirst()
                    .orElseThrow();
            assertEquals("read/write lock (read)", r.primitive());

            holder.submit(() -> {
                        rw.readLock().unlock();
                        return null;
                    })
                    .get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> disco.holdings().stream()
                            .anyMatch(x ->
                                    x.name().equals(rwName) && x.primitive().equals("read/write lock (write)")));
            release.countDown();
            assertTrue(waiting.get(10, TimeUnit.SECONDS));
            holder.submit(() -> {
                        lock.unlock();
                        return null;
                    })
                    .get(10, TimeUnit.SECONDS);
            assertEquals(List.of(), disco.holdings());
            disco.close();
            assertEquals(DiscoStatus.State.CLOSED, disco.status().state());
        } finally {
            holder.shutdownNow();
            waiter.shutdownNow();
        }
    }

    @Test
    void aHealingClientStartsWhileEtcdIsDownAndHealsWhenItAnswers() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        etcd.stopMember(0);
        try (Client client = Etcd.client(etcd)) {
            Disco disco;
            try {
                disco = EtcdProvider.healingDisco(client, options());
                DiscoStatus down = disco.status();
                assertEquals(DiscoStatus.State.HEALING, down.state());
                assertTrue(down.lastProblem().orElseThrow().startsWith("no owner opened yet"), down.toString());
                assertEquals(Optional.empty(), down.owner());
            } finally {
                etcd.startMember(0);
            }
            try (disco) {
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> disco.status().state() == DiscoStatus.State.UP);
                FencedLock lock = disco.lock(uniquePrefix("healed"));
                assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
                lock.unlock();
            }
        }
    }
}
