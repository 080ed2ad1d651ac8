package io.disco.provider.zookeeper;

import io.disco.contract.ContractBackend;
import io.disco.contract.UnconfirmedReleaseContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's rules for a release that gets no answer in time (issue 44) against ZooKeeper: the stalled client
 * reaches the shared in-process server through a {@link FreezableProxy} ({@link ZkContractBackend#stallableDiscoBackend}).
 */
class ZkUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected ContractBackend backend() {
        return ZK;
    }
}
