package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnconfirmedReleaseContract;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's rules for a release that gets no answer in time, on etcd (issue 44). */
class EtcdUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend();

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }

    @Override
    protected StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        return ETCD.stallableBackend(ttl, requestTimeout);
    }
}
