package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.DoubleBarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link DoubleBarrierContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkDoubleBarrierContractTest extends DoubleBarrierContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
