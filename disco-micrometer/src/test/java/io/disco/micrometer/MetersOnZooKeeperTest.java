package io.disco.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.LockService;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.testservers.ZooKeeperExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The same meters from a ZooKeeper session as from an etcd one ({@link ObservabilityTest}): the binding is one
 * listener of the backend-neutral {@code SessionListener}, registered on {@link ZooKeeperOptions}.
 */
class MetersOnZooKeeperTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static CuratorFramework client() {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(ZK.connectString())
                .sessionTimeoutMs(2_000)
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        c.start();
        return c;
    }

    @Test
    void aZooKeeperSessionFeedsTheSameMeters() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        ZooKeeperOptions options =
                ZooKeeperOptions.builder().listener(DiscoMetrics.of(registry)).build();
        String name = "/test/meters/" + UUID.randomUUID();
        try (CuratorFramework a = client();
                CuratorFramework b = client()) {
            ZooKeeperSession holder = ZooKeeperSession.open(a, options);
            ZooKeeperSession waiter = ZooKeeperSession.open(b, options);
            LockService held = holder.newLock(name);
            held.lock();
            LockService blocked = waiter.newLock(name);
            assertThrows(TimeoutException.class, () -> blocked.lock(Duration.ofMillis(100)));
            held.unlock();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> registry.find("disco.lease.remaining").gauges().size() == 2
                            && registry.get("disco.lease.renewals")
                                            .tag("outcome", "ok")
                                            .counter()
                                            .count()
                                    >= 2);
            assertTrue(registry.get("disco.lease.remaining")
                            .tag("lease", Long.toHexString(holder.sessionId()))
                            .gauge()
                            .value()
                    > 0);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> registry.find("disco.holds").timers().size() == 1);
            assertEquals(
                    1,
                    registry.get("disco.acquisitions")
                            .tags("primitive", "lock", "outcome", "acquired")
                            .timer()
                            .count());
            assertEquals(
                    1,
                    registry.get("disco.acquisitions")
                            .tags("primitive", "lock", "outcome", "failed")
                            .timer()
                            .count());
            assertEquals(
                    1,
                    registry.get("disco.holds")
                            .tags("primitive", "lock", "outcome", "released")
                            .timer()
                            .count());
            holder.close();
            waiter.close();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> registry.find("disco.lease.remaining").gauges().isEmpty());
        }
    }
}
