package io.disco.provider.etcd;

import io.disco.contract.ContractBackend;
import io.disco.contract.UnconfirmedReleaseContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's rules for a release that gets no answer in time, on etcd (issue 44). */
class EtcdUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected ContractBackend backend() {
        return ETCD;
    }
}
