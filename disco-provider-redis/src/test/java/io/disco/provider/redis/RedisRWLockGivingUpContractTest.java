package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.RWLockGivingUpContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link RWLockGivingUpContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisRWLockGivingUpContractTest extends RWLockGivingUpContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
