package io.disco.spring.boot;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link DiscoOutageHealthTest} on Redis, reached through Spring Boot's {@code spring.data.redis.host} and
 * {@code port}: a {@code redis-server} process of its own, which the test kills and starts again.
 */
class DiscoOutageHealthOnRedisTest extends DiscoOutageHealthTest {

    @RegisterExtension
    static final RedisProcess REDIS = new RedisProcess();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        REDIS.connection(properties);
        properties.add("disco.redis.connect-timeout", () -> "1s");
        properties.add("disco.redis.request-timeout", () -> "1s");
    }

    @Override
    void stopBackend() {
        REDIS.kill();
    }

    @Override
    void startBackend() {
        REDIS.restart();
    }
}
