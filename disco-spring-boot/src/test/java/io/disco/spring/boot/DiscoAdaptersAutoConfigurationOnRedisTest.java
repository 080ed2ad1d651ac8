package io.disco.spring.boot;

import io.disco.testservers.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;

/** {@link DiscoAdaptersAutoConfigurationTest} on the shared Redis server, through Spring Boot's {@code spring.data.redis.*}. */
class DiscoAdaptersAutoConfigurationOnRedisTest extends DiscoAdaptersAutoConfigurationTest {

    @RegisterExtension
    static final RedisExtension REDIS = RedisExtension.sharedServer();

    @Override
    Class<?>[] backendAutoConfigurations() {
        return new Class<?>[] {DataRedisAutoConfiguration.class};
    }

    @Override
    String[] backendProperties() {
        return new String[] {
            "spring.data.redis.host=" + REDIS.server().host(),
            "spring.data.redis.port=" + REDIS.server().port()
        };
    }
}
