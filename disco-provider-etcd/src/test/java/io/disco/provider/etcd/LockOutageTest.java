package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** etcd going away: a short outage is not a loss, a long one is, and an unreachable etcd is a timely error. */
class LockOutageTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static EtcdOptions options(int ttlSeconds) {
        return Etcd.options(ttlSeconds, 1);
    }

    @Test
    void anOutageShorterThanTheTtlIsNotALoss() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = uniquePrefix("short-outage");
        try (Client client = Etcd.client(etcd);
                LockService holder = EtcdProvider.newLock(client, prefix, options(10));
                LockService other = EtcdProvider.newLock(client, prefix, options(10))) {
            Grant g = holder.lock();
            long outageStart = System.nanoTime();
            etcd.restart(0); // down, then up again on the same ports and data
            // Stay past the point where a keepalive must have gone through the restarted member.
            await().atMost(Duration.ofSeconds(8))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> other.tryLock().isEmpty() && System.nanoTime() - outageStart > SECONDS.toNanos(5));
            assertFalse(
                    holder.done().toCompletableFuture().isDone(), "a restart within the TTL must not lose the lease");
            assertEquals(g, holder.held().orElseThrow());
            assertTrue(other.tryLock().isEmpty(), "nobody else may take a lock whose lease survived");
        }
    }

    @Test
    void anOutageLongerThanTheTtlIsALossWithinTtlPlusOneSecond() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        int ttl = 3;
        try (Client client = Etcd.client(etcd);
                LockService holder = EtcdProvider.newLock(client, uniquePrefix("long-outage"), options(ttl))) {
            holder.lock();
            long down = System.nanoTime();
            etcd.stopMember(0);
            try {
                holder.done().toCompletableFuture().get(ttl + 2, SECONDS);
                double elapsed = (System.nanoTime() - down) / 1e9;
                assertTrue(
                        elapsed <= ttl + 1.0,
                        "done() took " + elapsed + " s after the outage began; TTL is " + ttl + " s");
                assertTrue(holder.err().isPresent());
                assertTrue(holder.held().isEmpty());
            } finally {
                etcd.startMember(0);
            }
        }
    }

    @Test
    void unreachableEtcdIsATimelyClearErrorAndNothingSpins() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        try (Client client = Etcd.client(etcd);
                EtcdSession session = EtcdSession.open(client, options(30))) {
            LockService lock = session.newLock(uniquePrefix("unreachable"));
            etcd.stopMember(0);
            try {
                long start = System.nanoTime();
                DiscoException e = assertThrows(DiscoException.class, () -> lock.lock(Duration.ofSeconds(2)));
                double elapsed = (System.nanoTime() - start) / 1e9;
                assertTrue(elapsed < 3.0, "lock(2 s) took " + elapsed + " s to fail");
                assertTrue(e.getMessage().contains("could not be reached"), e.getMessage());

                // Opening a session (granting a lease) is bounded by the request timeout too.
                long openStart = System.nanoTime();
                DiscoException open = assertThrows(
                        DiscoException.class,
                        () -> EtcdProvider.newLock(client, uniquePrefix("unreachable-open"), options(30)));
                double openElapsed = (System.nanoTime() - openStart) / 1e9;
                assertTrue(openElapsed < 2.0, "opening a session took " + openElapsed + " s to fail");
                assertTrue(open.getMessage().contains("could not be reached"), open.getMessage());

                // No thread of ours keeps spinning: the session thread stays nearly idle while etcd is down.
                ThreadMXBean mx = ManagementFactory.getThreadMXBean();
                long before = sessionCpuNanos(mx);
                CompletableFuture<Void> oneSecond = new CompletableFuture<>();
                oneSecond.completeOnTimeout(null, 1, SECONDS).join();
                long used = sessionCpuNanos(mx) - before;
                assertTrue(used < 100_000_000L, "session threads used " + used / 1_000_000 + " ms of CPU in 1 s");
            } finally {
                etcd.startMember(0);
            }
        }
    }

    private static long sessionCpuNanos(ThreadMXBean mx) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("disco-etcd-session-"))
                .mapToLong(t -> Math.max(0, mx.getThreadCpuTime(t.getId())))
                .sum();
    }
}
