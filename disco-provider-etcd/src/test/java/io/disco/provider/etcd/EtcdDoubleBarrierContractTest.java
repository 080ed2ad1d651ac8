package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.DoubleBarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link DoubleBarrierContract} against etcd (one member shared by every contract class of the run). */
class EtcdDoubleBarrierContractTest extends DoubleBarrierContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
