package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.RWLockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link RWLockContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisRWLockContractTest extends RWLockContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
