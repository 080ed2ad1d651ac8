package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.BarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link BarrierContract} on a 3-primary Redis Cluster: every key of a name, and every script, in its slot. */
class RedisClusterBarrierContractTest extends BarrierContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.cluster();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
