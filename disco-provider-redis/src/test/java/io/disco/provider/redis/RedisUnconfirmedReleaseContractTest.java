package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.StallableClient;
import io.disco.contract.UnconfirmedReleaseContract;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's rules for a release that gets no answer in time (issue 44), the client stalled by a proxy. */
class RedisUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }

    @Override
    protected StallableClient stallableBackend(Duration ttl, Duration requestTimeout) {
        return REDIS.stallableBackend(ttl, requestTimeout);
    }
}
