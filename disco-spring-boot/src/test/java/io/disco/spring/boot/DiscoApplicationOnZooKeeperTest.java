package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link DiscoApplicationTest} on ZooKeeper, switched by properties alone: {@code disco.zookeeper.connect-string} of
 * a ZooKeeper server in a process of its own, which the health test kills and starts again.
 */
class DiscoApplicationOnZooKeeperTest extends DiscoApplicationTest {

    @RegisterExtension
    static final ZooKeeperProcess ZK = new ZooKeeperProcess();

    @DynamicPropertySource
    static void zooKeeper(DynamicPropertyRegistry properties) {
        properties.add("disco.zookeeper.connect-string", ZK::connectString);
        properties.add("disco.zookeeper.connection-timeout", () -> "2s");
        properties.add("disco.zookeeper.request-timeout", () -> "2s");
    }

    @Override
    void stopBackend() {
        ZK.kill();
    }

    @Override
    void startBackend() {
        ZK.restart();
    }

    /** A ZooKeeper lock holder's key: its node, as Curator's {@code InterProcessMutex} names it. */
    @Override
    void assertKey(String endpointAnswer, String name, String owner) {
        assertThat(endpointAnswer).containsPattern("\"key\":\"" + name + "/_c_[0-9a-f-]{36}-lock-\\d{10}\"");
    }
}
