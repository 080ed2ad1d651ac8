package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.election.LeadershipRunner;
import io.disco.testservers.ZooKeeperExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@link DiscoShutdownTest} on ZooKeeper: each instance's {@code CuratorFramework} is one ZooKeeper session, so the
 * leader's runner campaigns on the client's ({@link Disco#leadershipRunner}).
 */
class DiscoShutdownOnZooKeeperTest extends DiscoShutdownTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

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
        return new String[] {"disco.zookeeper.connect-string=" + ZK.connectString()};
    }
}
