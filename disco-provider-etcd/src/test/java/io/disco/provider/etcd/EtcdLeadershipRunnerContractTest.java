package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.LeadershipRunnerContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link LeadershipRunnerContract} against etcd (one member shared by every contract class of the run). */
class EtcdLeadershipRunnerContractTest extends LeadershipRunnerContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
