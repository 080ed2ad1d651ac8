package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link DiscoApplicationTest} on Redis (issue 48, item 5): an application that has Redis already, through Spring
 * Boot's own {@code spring.data.redis.host} and {@code port} and nothing of disco's, gets its fenced locks, the guard,
 * the endpoint, the metrics and the {@code disco} health on that Redis; a {@code redis-server} process of its own,
 * which the health test kills and starts again. Redis has no issued bound: a forged token is not told apart there.
 */
class DiscoApplicationOnRedisTest extends DiscoApplicationTest {

    @RegisterExtension
    static final RedisProcess REDIS = new RedisProcess();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry properties) {
        REDIS.connection(properties);
    }

    @Override
    void stopBackend() {
        REDIS.kill();
    }

    @Override
    void startBackend() {
        REDIS.restart();
    }

    @Override
    boolean hasIssuedBound() {
        return false;
    }

    /** A Redis holder's key, as the listing reports it: the name, then the claim's id. */
    @Override
    void assertKey(String endpointAnswer, String name, String owner) {
        assertThat(endpointAnswer).containsPattern("\"key\":\"" + name + "/[0-9a-z:-]+\"");
    }
}
