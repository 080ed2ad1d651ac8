package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.ClientSemaphoreContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link ClientSemaphoreContract} against etcd (one member shared by every contract class of the run). */
class EtcdClientSemaphoreContractTest extends ClientSemaphoreContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
