package io.disco.provider.zookeeper;

import io.disco.client.TestableBackend;
import io.disco.contract.SessionListenerContract;
import io.disco.core.SessionListener;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link SessionListenerContract} against ZooKeeper (one in-process server shared by every contract class of the run). */
class ZkSessionListenerContractTest extends SessionListenerContract {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Override
    protected TestableBackend backend() {
        return ZK.backend();
    }

    @Override
    protected TestableBackend listening(SessionListener listener) {
        return ZK.listening(listener);
    }
}
