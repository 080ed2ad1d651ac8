package io.disco.provider.zookeeper;

import io.disco.contract.ContractBackend;
import io.disco.contract.OwnerContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link OwnerContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkOwnerContractTest extends OwnerContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected ContractBackend backend() {
        return ZK;
    }
}
