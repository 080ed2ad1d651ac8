package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.RWLockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link RWLockContract} against etcd (one member shared by every contract class of the run). */
class EtcdRWLockContractTest extends RWLockContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
