package io.disco.provider.etcd;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnconfirmedReleaseContract;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's rules for a release that gets no answer in time, with the member itself frozen (SIGSTOP) for
 * longer than the request timeout and shorter than the TTL, for every client of the test: the fault run of
 * issue 44 (two threads of one process and a second process). {@link EtcdUnconfirmedReleaseContractTest}
 * stalls one client's link instead.
 */
class EtcdFrozenMemberReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final EtcdContractBackend ETCD = new EtcdContractBackend(true);

    @Override
    protected TestableBackend backend() {
        return ETCD.backend();
    }

    @Override
    protected StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        return ETCD.stallableBackend(ttl, requestTimeout);
    }
}
