package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.FencedLockContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link FencedLockContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisFencedLockContractTest extends FencedLockContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
