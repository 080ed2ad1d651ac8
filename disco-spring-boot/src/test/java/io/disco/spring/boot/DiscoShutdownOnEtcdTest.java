package io.disco.spring.boot;

import io.disco.client.Disco;
import io.disco.election.LeadershipRunner;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/** {@link DiscoShutdownTest} on etcd: the leader's runner campaigns on sessions of its own on the jetcd client. */
class DiscoShutdownOnEtcdTest extends DiscoShutdownTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class LeaderApp {

        @Bean
        LeadershipRunner leader(Client client, EtcdOptions options, Environment env, ObjectProvider<Disco> disco) {
            String me = env.getRequiredProperty("test.instance");
            return EtcdProvider.newLeadershipRunner(
                    client, env.getRequiredProperty("test.election"), leaderOptions(me, disco), options);
        }
    }

    @Override
    Class<?> app() {
        return LeaderApp.class;
    }

    @Override
    String[] backendProperties() {
        return new String[] {
            "disco.etcd.endpoints=" + String.join(",", ETCD.cluster().endpoints())
        };
    }
}
