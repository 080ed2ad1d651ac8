package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.SemaphoreContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link SemaphoreContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkSemaphoreContractTest extends SemaphoreContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
