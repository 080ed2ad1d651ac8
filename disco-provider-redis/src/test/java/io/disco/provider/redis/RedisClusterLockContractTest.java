package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.LockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's {@link LockContract} on a 3-primary Redis Cluster: every key of a name in one slot, grants on a
 * connection to that slot's primary, the epoch its configEpoch.
 */
class RedisClusterLockContractTest extends LockContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.cluster();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
