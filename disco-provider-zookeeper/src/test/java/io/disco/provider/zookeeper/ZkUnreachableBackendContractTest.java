package io.disco.provider.zookeeper;

import io.disco.contract.ContractBackend;
import io.disco.contract.UnreachableBackendContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UnreachableBackendContract} against ZooKeeper, cut off by a proxy that freezes. */
class ZkUnreachableBackendContractTest extends UnreachableBackendContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected ContractBackend backend() {
        return ZK;
    }
}
