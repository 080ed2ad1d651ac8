package io.disco.provider.redis;

import io.disco.client.TestableBackend;
import io.disco.contract.SessionListenerContract;
import io.disco.core.SessionListener;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit's {@link SessionListenerContract} against a standalone Redis. */
class RedisSessionListenerContractTest extends SessionListenerContract {

    @RegisterExtension
    static final RedisContractBackend REDIS = new RedisContractBackend();

    @Override
    protected TestableBackend backend() {
        return REDIS.backend();
    }

    @Override
    protected TestableBackend listening(SessionListener listener) {
        return REDIS.listening(listener);
    }
}
