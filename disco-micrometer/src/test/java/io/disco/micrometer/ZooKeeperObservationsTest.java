package io.disco.micrometer;

import io.disco.client.TestableBackend;
import io.disco.provider.zookeeper.ZooKeeperDiscoBackend;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The same observations of a client on ZooKeeper (the in-process server of the test servers): backend-neutral. */
class ZooKeeperObservationsTest extends ObservationsTests {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static ZooKeeperDiscoBackend backend;

    @BeforeAll
    static void connect() {
        backend = ZooKeeperDiscoBackend.over(
                CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .ensembleTracker(false)
                        .sessionTimeoutMs(10_000)
                        .connectionTimeoutMs(5_000)
                        .retryPolicy(new RetryNTimes(3, 100)),
                ZooKeeperOptions.builder()
                        .connectTimeout(Duration.ofSeconds(10))
                        .requestTimeout(Duration.ofSeconds(10))
                        .build());
    }

    @AfterAll
    static void disconnect() {
        if (backend != null) {
            backend.close();
        }
    }

    @Override
    TestableBackend backend() {
        return backend;
    }
}
