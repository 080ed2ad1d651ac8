package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.DoubleBarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link DoubleBarrierContract} on a 3-primary Redis Cluster: every key of a name, and every script, in its slot. */
class RedisClusterDoubleBarrierContractTest extends DoubleBarrierContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = RedisContractBackend.cluster();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
