package io.disco.provider.zookeeper;

import io.disco.contract.ClientHoldsContract;
import io.disco.contract.ContractBackend;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link ClientHoldsContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkClientHoldsContractTest extends ClientHoldsContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected ContractBackend backend() {
        return ZK;
    }
}
