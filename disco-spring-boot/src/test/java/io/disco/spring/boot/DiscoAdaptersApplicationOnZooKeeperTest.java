package io.disco.spring.boot;

import io.disco.testservers.ZooKeeperExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link DiscoAdaptersApplicationTest} on the shared in-process ZooKeeper server. */
class DiscoAdaptersApplicationOnZooKeeperTest extends DiscoAdaptersApplicationTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    @Override
    String[] backendProperties() {
        return new String[] {"disco.zookeeper.connect-string=" + ZK.connectString()};
    }
}
