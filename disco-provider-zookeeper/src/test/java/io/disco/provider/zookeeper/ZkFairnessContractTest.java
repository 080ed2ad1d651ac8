package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.FairnessContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's fairness rules (per-process FIFO, no writer starved by readers) on ZooKeeper. */
class ZkFairnessContractTest extends FairnessContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }
}
