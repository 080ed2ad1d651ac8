package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.LockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's {@link LockContract} through Sentinel (a primary, two replicas, three sentinels): grants wait for one
 * replica's acknowledgement and take their epoch from a majority of the sentinels.
 */
class RedisSentinelLockContractTest extends LockContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.sentinels();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
