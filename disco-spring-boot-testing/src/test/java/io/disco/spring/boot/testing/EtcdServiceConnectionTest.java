package io.disco.spring.boot.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.spring.boot.EtcdConnectionDetails;
import io.disco.testservers.EtcdExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * A {@code @SpringBootTest} with no bean and no property for etcd: the annotated extension field is enough.
 */
@SpringBootTest(classes = EtcdServiceConnectionTest.App.class, properties = "disco.fail-fast=true")
class EtcdServiceConnectionTest {

    @RegisterExtension
    @EtcdServiceConnection
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Autowired
    EtcdConnectionDetails details;

    @Autowired
    Disco disco;

    @Test
    void theAutoConfiguredClientTalksToTheTestEtcd() throws InterruptedException {
        assertThat(details.endpoints()).isEqualTo(ETCD.cluster().endpoints());
        FencedLock lock = disco.lock("/test/spring-boot-testing/service-connection");
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(lock.token().value()).isPositive();
        } finally {
            lock.unlock();
        }
    }
}
