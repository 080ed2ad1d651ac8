package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.BarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link BarrierContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkBarrierContractTest extends BarrierContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
