package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testing.EtcdCluster;
import io.disco.testing.MemberNetwork;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The member partitions of the nemesis bite: on a cluster whose members each have a network
 * namespace, the side cut off from the majority never grants (while the majority does, and while the
 * same acquisition on an uncut network would be granted at once), and the clients of an isolated
 * leader stop being granted until they move to the other members.
 */
class NetworkFaultTest {

    private static final EtcdOptions OPTIONS = EtcdOptions.builder().ttl(Duration.ofSeconds(2))
            .requestTimeout(Duration.ofSeconds(2)).build();
    private static EtcdCluster etcd;
    private static MemberNetwork net;

    @BeforeAll
    static void start() {
        etcd = EtcdCluster.startNetworked(3);
        net = etcd.network().orElseThrow();
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void theMinoritySideNeverGrantsWhileTheMajorityDoes() throws Exception {
        String name = "/net-test/minority";
        try (Client toMinority = client(0); Client toMajority = client(1, 2);
             EtcdSession minority = EtcdSession.open(toMinority, OPTIONS);
             EtcdSession majority = EtcdSession.open(toMajority, OPTIONS);
             LockService onMinority = minority.newLock(name);
             LockService onMajority = majority.newLock(name)) {
            isolate(0);
            Grant majorityGrant;
            try {
                majorityGrant = onMajority.lock(Duration.ofSeconds(10));
                onMajority.unlock();
                // the lock is free: without the partition this acquisition would be granted at once
                assertNull(attempt(onMinority, Duration.ofSeconds(3)), "the minority side granted");
                minority.done().toCompletableFuture().get(2 * OPTIONS.ttl().toMillis(), TimeUnit.MILLISECONDS);
                assertNotNull(onMajority.lock(Duration.ofSeconds(10)), "the majority grants again");
                onMajority.unlock();
            } finally {
                net.healAll();
            }
            try (EtcdSession again = EtcdSession.open(toMinority, OPTIONS); LockService l = again.newLock(name)) {
                Grant healed = l.lock(Duration.ofSeconds(10));
                assertTrue(healed.token().value() > majorityGrant.token().value(), healed + " after " + majorityGrant);
            }
        }
    }

    @Test
    void theClientsOfAnIsolatedLeaderAreNotGrantedUntilTheyMove() throws Exception {
        String name = "/net-test/leader";
        int leader = leader();
        int[] others = IntStream.range(0, 3).filter(i -> i != leader).toArray();
        try (Client toLeader = client(leader);
             EtcdSession onLeader = EtcdSession.open(toLeader, OPTIONS);
             LockService lock = onLeader.newLock(name)) {
            isolate(leader);
            try {
                assertNull(attempt(lock, Duration.ofSeconds(3)), "the isolated leader's client was granted");
                try (Client moved = client(others); EtcdSession session = EtcdSession.open(moved, OPTIONS);
                     LockService l = session.newLock(name)) {
                    assertNotNull(l.lock(Duration.ofSeconds(10)), "granted once it moved to the majority");
                }
            } finally {
                net.healAll();
            }
        }
    }

    /** Cuts member {@code m} off from the two others, both ways. */
    private static void isolate(int m) {
        List<Integer> others = IntStream.range(0, 3).filter(i -> i != m).boxed().toList();
        net.cut(m, others);
        others.forEach(o -> net.cut(o, List.of(m)));
    }

    /** @return the grant, or null when the acquisition failed in any way (timeout, lost lease, no answer) */
    private static Grant attempt(LockService lock, Duration timeout) throws InterruptedException {
        try {
            return lock.lock(timeout);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return null;
        }
    }

    private static Client client(int... members) {
        return Client.builder().endpoints(IntStream.of(members).mapToObj(etcd::endpoint).toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(2))).build();
    }

    /** The member that leads, awaited (after the previous test's partition healed) for at most 10 s. */
    private static int leader() throws Exception {
        try (Client c = client(0, 1, 2)) {
            return Awaitility.await("a member leads").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions().until(() -> leading(c), i -> i >= 0);
        }
    }

    /** The index of the member that says it leads, or -1. */
    private static int leading(Client c) throws Exception {
        for (int i = 0; i < 3; i++) {
            StatusResponse s = c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(5, TimeUnit.SECONDS);
            if (s.getLeader() == s.getHeader().getMemberId()) {
                return i;
            }
        }
        return -1;
    }
}
