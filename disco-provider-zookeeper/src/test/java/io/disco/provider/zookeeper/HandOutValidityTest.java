package io.disco.provider.zookeeper;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No ZooKeeper session is handed out nearly dead (issue 44, item A): the session declares itself lost
 * {@code 2T/3} after the send time of its newest answered request, so an opening request answered late (a
 * cold JVM's first request, a slow link) handed it out with little of that window left, and the watchdog
 * declared it lost before its first ping was answered. It is handed out only with at least half the window
 * ({@code T/3}) left: one more request is sent first. The opening request is made slow here by a
 * {@code ZooKeeper} whose first synchronous {@code exists} waits 1.6 s before it is sent (the session
 * counts from before it).
 */
class HandOutValidityTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static final int SESSION_MS = 3_000;
    /** Half the validity window of 2T/3. */
    private static final long THRESHOLD_MS = SESSION_MS / 3;

    private static final long SLOW_MS = 1_600;
    private static final long SLACK_MS = 100;

    /** Each ZooKeeper it makes answers its first synchronous exists 1.6 s late. */
    private static final class SlowFirstExists implements ZookeeperFactory {
        @Override
        public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly)
                throws Exception {
            return new Slow(connectString, sessionTimeout, watcher, canBeReadOnly, null);
        }

        @Override
        public ZooKeeper newZooKeeper(
                String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, ZKClientConfig config)
                throws Exception {
            return new Slow(connectString, sessionTimeout, watcher, canBeReadOnly, config);
        }
    }

    private static final class Slow extends ZooKeeper {
        private final AtomicBoolean first = new AtomicBoolean(true);

        Slow(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, ZKClientConfig config)
                throws Exception {
            super(
                    connectString,
                    sessionTimeout,
                    watcher,
                    canBeReadOnly,
                    config == null ? new ZKClientConfig() : config);
        }

        private void slowOnce() throws InterruptedException {
            if (first.getAndSet(false)) {
                TimeUnit.MILLISECONDS.sleep(SLOW_MS); // the injected slow round trip, as DelayingInterceptor's for etcd
            }
        }

        @Override
        public Stat exists(String path, boolean watch) throws KeeperException, InterruptedException {
            slowOnce();
            return super.exists(path, watch);
        }

        @Override
        public Stat exists(String path, Watcher watcher) throws KeeperException, InterruptedException {
            slowOnce();
            return super.exists(path, watcher);
        }
    }

    private static CuratorFrameworkFactory.Builder builder() {
        return CuratorFrameworkFactory.builder()
                .connectString(ZK.connectString())
                .sessionTimeoutMs(SESSION_MS)
                .connectionTimeoutMs(SESSION_MS)
                .retryPolicy(new RetryOneTime(100))
                .zookeeperFactory(new SlowFirstExists());
    }

    @Test
    void aSessionWhoseFirstRequestWasAnsweredLateIsNotHandedOutNearlyDead() throws Exception {
        try (CuratorFramework client = builder().build()) {
            client.start();
            long start = System.nanoTime();
            try (ZooKeeperSession session = ZooKeeperSession.open(client, ZooKeeperOptions.defaults())) {
                long atHandOut = session.remainingValidity().toMillis();
                System.out.printf(
                        "opening request answered %d ms late, session timeout %d ms: open took %d ms, remaining validity at"
                                + " hand-out %d ms (threshold %d ms)%n",
                        SLOW_MS,
                        SESSION_MS,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                        atHandOut,
                        THRESHOLD_MS);
                boolean stayed;
                try {
                    await("the session stays")
                            .during(Duration.ofMillis(SESSION_MS))
                            .atMost(Duration.ofMillis(SESSION_MS + 2_000))
                            .until(() -> session.state() != SessionState.LOST);
                    stayed = true;
                } catch (ConditionTimeoutException e) {
                    stayed = false;
                }
                System.out.println("  then "
                        + (stayed
                                ? "stayed for T"
                                : "declared lost: "
                                        + session.err()
                                                .map(Throwable::getMessage)
                                                .orElse("?")));
                assertTrue(atHandOut >= THRESHOLD_MS - SLACK_MS, "handed out with " + atHandOut + " ms of validity");
                assertTrue(stayed, "lost right after: " + session.err());
            }
        }
    }

    @Test
    void theClientsOwnerIsNotHandedOutNearlyDead() throws Exception {
        try (Disco disco = Disco.over(ZooKeeperDiscoBackend.over(builder(), ZooKeeperOptions.defaults()))) {
            DiscoStatus first = disco.status();
            System.out.printf(
                    "the client's ZooKeeper owner: remaining validity at hand-out %d ms%n",
                    first.remainingValidity().toMillis());
            assertEquals(DiscoStatus.State.UP, first.state());
            assertTrue(first.remainingValidity().toMillis() >= THRESHOLD_MS - SLACK_MS, first.toString());
            Optional<String> owner = first.owner();
            await("the owner stays")
                    .during(Duration.ofMillis(SESSION_MS))
                    .atMost(Duration.ofMillis(SESSION_MS + 2_000))
                    .until(() -> disco.status().owner().equals(owner)
                            && disco.status().state() == DiscoStatus.State.UP);
        }
    }
}
