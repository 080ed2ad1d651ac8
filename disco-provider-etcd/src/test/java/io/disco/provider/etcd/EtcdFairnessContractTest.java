package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.FairnessContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's fairness rules (per-process FIFO, no writer starved by readers) on etcd. */
class EtcdFairnessContractTest extends FairnessContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
