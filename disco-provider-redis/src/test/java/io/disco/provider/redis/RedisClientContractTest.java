package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.ClientContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link ClientContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisClientContractTest extends ClientContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
