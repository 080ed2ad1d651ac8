package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.lock.FencedLock;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

/** What the connection tests check of an application that started against etcd: its client is UP and takes a lock. */
final class StartedClient {

    private StartedClient() {}

    /**
     * Asserts that {@code context} started, that its {@link Disco} is UP, and that it takes (and releases) a lock of a
     * new name under {@code namePrefix} within 10 s.
     */
    static void assertUpAndLocks(AssertableApplicationContext context, String namePrefix) throws InterruptedException {
        assertThat(context).hasNotFailed();
        Disco disco = context.getBean(Disco.class);
        assertThat(disco.status().state()).isEqualTo(DiscoStatus.State.UP);
        FencedLock lock = disco.lock(namePrefix + UUID.randomUUID());
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        lock.unlock();
    }
}
