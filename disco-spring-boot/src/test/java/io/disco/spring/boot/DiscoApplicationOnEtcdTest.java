package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.testservers.EtcdExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** {@link DiscoApplicationTest} on etcd: a member of its own, reached through a connection-details bean. */
@Import(DiscoApplicationOnEtcdTest.TestEtcd.class)
class DiscoApplicationOnEtcdTest extends DiscoApplicationTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** The test etcd as a service connection: no disco.etcd.endpoints to wire. */
    @Configuration(proxyBeanMethods = false)
    static class TestEtcd {
        @Bean
        EtcdConnectionDetails testEtcd() {
            return EtcdConnectionDetails.of(ETCD.cluster().endpoints());
        }
    }

    @Override
    void stopBackend() {
        ETCD.cluster().stopMember(0);
    }

    @Override
    void startBackend() {
        ETCD.cluster().startMember(0);
    }

    /** etcd's key of a lock holder: the name, then the lease in hex. */
    @Override
    void assertKey(String endpointAnswer, String name, String owner) {
        assertThat(endpointAnswer).contains("\"key\":\"" + name + "/" + owner + "\"");
    }
}
