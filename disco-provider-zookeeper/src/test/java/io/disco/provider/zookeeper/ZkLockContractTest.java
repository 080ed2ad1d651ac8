package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.LockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link LockContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkLockContractTest extends LockContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
