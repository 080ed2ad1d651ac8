package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.SessionListenerContract;
import io.disco.core.SessionListener;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link SessionListenerContract} against etcd (one member shared by every contract class of the run). */
class EtcdSessionListenerContractTest extends SessionListenerContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }

    @Override
    protected TestableBackend listening(SessionListener listener) {
        return ETCD.listening(listener);
    }
}
