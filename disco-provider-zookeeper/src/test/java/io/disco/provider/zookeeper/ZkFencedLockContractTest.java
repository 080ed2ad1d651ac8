package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.FencedLockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link FencedLockContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkFencedLockContractTest extends FencedLockContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
