package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.UniformRulesContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UniformRulesContract} against etcd (one member shared by every contract class of the run). */
class EtcdUniformRulesContractTest extends UniformRulesContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }
}
