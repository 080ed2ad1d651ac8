package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.ClientElectionContract;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link ClientElectionContract} against a standalone Redis (one server shared by every contract class of the run). */
class RedisClientElectionContractTest extends ClientElectionContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }
}
