package io.disco.provider.zookeeper;

import io.disco.contract.ContractBackend;
import io.disco.contract.FairnessContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's fairness rules (per-process FIFO, no writer starved by readers) on ZooKeeper. */
class ZkFairnessContractTest extends FairnessContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected ContractBackend backend() {
        return ZK;
    }
}
