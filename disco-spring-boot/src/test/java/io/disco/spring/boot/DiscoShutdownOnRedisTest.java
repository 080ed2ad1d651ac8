package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.election.LeadershipRunner;
import io.disco.testservers.RedisExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@link DiscoShutdownTest} on Redis, through Spring Boot's {@code spring.data.redis.*}: each instance's client has
 * one Redis session, so the leader's runner campaigns on the client's ({@link Disco#leadershipRunner}); at shutdown the
 * session ends (its claims deleted) before the context shuts the starter's Lettuce client down.
 */
class DiscoShutdownOnRedisTest extends DiscoShutdownTest {

    @RegisterExtension
    static final RedisExtension REDIS = RedisExtension.sharedServer();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class LeaderApp {

        @Bean
        LeadershipRunner leader(Disco disco, Environment env, ObjectProvider<Disco> clients) {
            String me = env.getRequiredProperty("test.instance");
            return disco.leadershipRunner(env.getRequiredProperty("test.election"), leaderOptions(me, clients));
        }
    }

    @Override
    Class<?> app() {
        return LeaderApp.class;
    }

    @Override
    String[] backendProperties() {
        return new String[] {
            "spring.data.redis.host=" + REDIS.server().host(),
            "spring.data.redis.port=" + REDIS.server().port()
        };
    }
}
