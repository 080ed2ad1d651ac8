package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.BarrierContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link BarrierContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisBarrierContractTest extends BarrierContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
