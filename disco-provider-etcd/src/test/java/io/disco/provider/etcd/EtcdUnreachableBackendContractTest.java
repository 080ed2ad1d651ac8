package io.disco.provider.etcd;

import io.disco.contract.ContractBackend;
import io.disco.contract.UnreachableBackendContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UnreachableBackendContract} against etcd, cut off by a proxy that stops forwarding. */
class EtcdUnreachableBackendContractTest extends UnreachableBackendContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected ContractBackend backend() {
        return ETCD;
    }
}
