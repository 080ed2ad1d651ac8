package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A 3-member cluster losing a member the clients talk to, while a lock or a leadership is held and another owner waits. */
class ClusterFaultTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    @Test
    void killingAMemberNeverGivesTheLockToTwoOwners() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = uniquePrefix("cluster");
        EtcdOptions options = Etcd.options(10, 3);
        // Every client knows all three members and balances across them, so member 0 serves some of its calls.
        try (Client holderClient = Etcd.client(etcd);
                Client waiterClient = Etcd.client(etcd);
                Client probeClient = Etcd.client(etcd);
                LockService holder = EtcdProvider.newLock(holderClient, prefix, options);
                LockService waiter = EtcdProvider.newLock(waiterClient, prefix, options);
                LockService probe = EtcdProvider.newLock(probeClient, prefix, options)) {
            Grant held = holder.lock();
            CompletableFuture<Grant> waiting = waiter.lockAsync();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> Etcd.keysUnder(probeClient, prefix).size() == 2);

            etcd.kill(0);
            try {
                // The holder keeps the lock through the failover; nobody else gets in.
                await().atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(250))
                        .ignoreExceptions()
                        .until(() -> probe.tryLock().isEmpty());
                assertFalse(waiting.isDone(), "the waiter must not acquire while the holder holds the lock");
                assertFalse(
                        holder.done().toCompletableFuture().isDone(), "the holder's lease survives losing one member");

                // Release (retrying while the client fails over), then the waiter gets in with a higher token.
                await().atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(250))
                        .ignoreExceptions()
                        .until(() -> {
                            holder.unlock();
                            return holder.held().isEmpty();
                        });
                Grant next = waiting.get(15, SECONDS);
                assertTrue(next.token().isNewerThan(held.token()));
                assertTrue(probe.tryLock().isEmpty(), "still exclusive after the failover");
            } finally {
                etcd.startMember(0);
            }
        }
    }

    @Test
    void killingAMemberNeverGivesTheLeadershipToTwoCandidates() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = uniquePrefix("cluster-election");
        EtcdOptions options = Etcd.options(10, 3);
        List<Leadership> seen = new CopyOnWriteArrayList<>();
        try (Client leaderClient = Etcd.client(etcd);
                Client nextClient = Etcd.client(etcd);
                Client observerClient = Etcd.client(etcd);
                ElectionService leader = EtcdProvider.newElection(leaderClient, prefix, options);
                ElectionService next = EtcdProvider.newElection(nextClient, prefix, options);
                ElectionService observer = EtcdProvider.newElection(observerClient, prefix, options);
                Observation watching = observer.observe(seen::add)) {
            Leadership first = leader.campaign("first");
            CompletableFuture<Leadership> waiting = next.campaignAsync("next");
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> Etcd.keysUnder(observerClient, prefix).size() == 2);

            etcd.kill(1);
            try {
                // Through the failover the first leader keeps its term; the next candidate does not win.
                await().atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(250))
                        .ignoreExceptions()
                        .until(() -> observer.leader().orElseThrow().token().equals(first.token()));
                assertFalse(waiting.isDone(), "the next candidate must not lead while the first one does");
                assertFalse(
                        leader.done().toCompletableFuture().isDone(), "the leader's lease survives losing one member");

                await().atMost(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(250))
                        .ignoreExceptions()
                        .until(() -> {
                            leader.resign();
                            return leader.held().isEmpty();
                        });
                Leadership second = waiting.get(15, SECONDS);
                assertTrue(second.token().isNewerThan(first.token()));
                await().atMost(Duration.ofSeconds(10))
                        .until(() ->
                                !seen.isEmpty() && seen.get(seen.size() - 1).equals(second));
                assertEquals(first, seen.get(0), "the observer saw the first term first");
            } finally {
                etcd.startMember(1);
            }
        }
    }
}
