package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.OwnerContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link OwnerContract} against etcd (one member shared by every contract class of the run). */
class EtcdOwnerContractTest extends OwnerContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
