package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.UnreachableBackendContract;
import io.disco.contract.UnreachableClient;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link UnreachableBackendContract} against a standalone Redis, cut off by a proxy. */
class RedisUnreachableBackendContractTest extends UnreachableBackendContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }

    @Override
    protected UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait) {
        return REDIS.unreachableBackend(ttl, requestTimeout, ownerWait);
    }
}
