package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testing.EtcdCluster;
import io.disco.testing.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A 3-member cluster losing the member the clients talk to, while a lock is held and another owner waits. */
class LockClusterTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    @Test
    void killingAMemberNeverGivesTheLockToTwoOwners() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = uniquePrefix("cluster");
        EtcdOptions options = EtcdOptions.builder().ttl(Duration.ofSeconds(10)).requestTimeout(Duration.ofSeconds(3)).build();
        // Every client knows all three members and balances across them, so member 0 serves some of its calls.
        try (Client holderClient = Etcd.client(etcd);
             Client waiterClient = Etcd.client(etcd);
             Client probeClient = Etcd.client(etcd);
             LockService holder = EtcdProvider.newLock(holderClient, prefix, options);
             LockService waiter = EtcdProvider.newLock(waiterClient, prefix, options);
             LockService probe = EtcdProvider.newLock(probeClient, prefix, options)) {
            Grant held = holder.lock();
            CompletableFuture<Grant> waiting = waiter.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> Etcd.keysUnder(probeClient, prefix).size() == 2);

            etcd.kill(0);

            // The holder keeps the lock through the failover; nobody else gets in.
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions().until(() -> probe.tryLock().isEmpty());
            assertFalse(waiting.isDone(), "the waiter must not acquire while the holder holds the lock");
            assertFalse(holder.done().toCompletableFuture().isDone(), "the holder's lease survives losing one member");

            // Release (retrying while the client fails over), then the waiter gets in with a higher token.
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() -> {
                holder.unlock();
                return holder.held().isEmpty();
            });
            Grant next = waiting.get(15, SECONDS);
            assertTrue(next.token().isNewerThan(held.token()));
            assertTrue(probe.tryLock().isEmpty(), "still exclusive after the failover");
        }
    }
}
