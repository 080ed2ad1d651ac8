package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.UnreachableBackendContract;
import io.disco.contract.UnreachableClient;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UnreachableBackendContract} against ZooKeeper, cut off by a proxy that freezes. */
class ZkUnreachableBackendContractTest extends UnreachableBackendContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }

    @Override
    protected UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        return ZK.unreachableBackend(ttl, requestTimeout, ownerWait);
    }
}
