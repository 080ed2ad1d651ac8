package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.UnreachableBackendContract;
import io.disco.contract.UnreachableClient;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UnreachableBackendContract} against etcd, cut off by a proxy that stops forwarding. */
class EtcdUnreachableBackendContractTest extends UnreachableBackendContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }

    @Override
    protected UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        return ETCD.unreachableBackend(ttl, requestTimeout, ownerWait);
    }
}
