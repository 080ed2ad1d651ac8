package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.BarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link BarrierContract} against etcd (one member shared by every contract class of the run). */
class EtcdBarrierContractTest extends BarrierContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
