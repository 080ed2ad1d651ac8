package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnconfirmedReleaseContract;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's rules for a release that gets no answer in time (issue 44) against ZooKeeper: the stalled client
 * reaches the shared in-process server through a {@link FreezableProxy} ({@link ZkContractBackend#stallableBackend}).
 */
class ZkUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }

    @Override
    protected StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        return ZK.stallableBackend(ttl, requestTimeout);
    }
}
