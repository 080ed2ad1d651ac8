package io.disco.spring.boot;

import io.disco.testservers.EtcdExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** {@link DiscoOutageHealthTest} on etcd: a member of its own, reached through a connection-details bean. */
@Import(DiscoOutageHealthOnEtcdTest.TestEtcd.class)
class DiscoOutageHealthOnEtcdTest extends DiscoOutageHealthTest {

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
}
