package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.ClientContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link ClientContract} against etcd (one member shared by every contract class of the run). */
class EtcdClientContractTest extends ClientContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
