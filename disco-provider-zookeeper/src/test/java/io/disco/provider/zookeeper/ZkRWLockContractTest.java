package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.RWLockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link RWLockContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkRWLockContractTest extends RWLockContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
