package io.disco.spring.boot;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link DiscoOutageHealthTest} on ZooKeeper, switched by properties alone: {@code disco.zookeeper.connect-string} of
 * a ZooKeeper server in a process of its own, which the test kills and starts again.
 */
class DiscoOutageHealthOnZooKeeperTest extends DiscoOutageHealthTest {

    @RegisterExtension
    static final ZooKeeperProcess ZK = new ZooKeeperProcess();

    @DynamicPropertySource
    static void zooKeeper(DynamicPropertyRegistry properties) {
        properties.add("disco.zookeeper.connect-string", ZK::connectString);
        properties.add("disco.zookeeper.connection-timeout", () -> "1s");
        properties.add("disco.zookeeper.request-timeout", () -> "1s");
    }

    @Override
    void stopBackend() {
        ZK.kill();
    }

    @Override
    void startBackend() {
        ZK.restart();
    }
}
