package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.Leadership;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lock's etcd-specific cases: the key layout, the provider's factories and options, a service that owns
 * its session, and a session's loss reaching every service on it. The contract (exclusion, tokens, zombies,
 * giving up, revoked waiters, compaction, loss, input, close) is {@code LockContract} and
 * {@code ElectionContract}, run by {@link EtcdLockContractTest} and {@link EtcdElectionContractTest}.
 */
class LockTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    /** A lock's and an election's key is {@code <prefix>/<lease hex>}, as etcd's Go Mutex and Election make it. */
    @Test
    void keysAreTheGoLayout() throws Exception {
        String lockPrefix = uniquePrefix("layout-lock");
        String electionPrefix = uniquePrefix("layout-election");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(10))) {
            String own = EtcdSession.hex(session.leaseId());
            Grant g = session.newLock(lockPrefix).lock();
            assertEquals(lockPrefix + "/" + own, g.key());
            assertEquals(List.of(g.key()), keysUnder(ETCD.client(), lockPrefix));
            Leadership l = session.newElection(electionPrefix).campaign("a");
            assertEquals(electionPrefix + "/" + own, l.key());
            assertEquals(List.of(l.key()), keysUnder(ETCD.client(), electionPrefix));
        }
        assertEquals(List.of(), keysUnder(ETCD.client(), lockPrefix));
        assertEquals(List.of(), keysUnder(ETCD.client(), electionPrefix));
    }

    @Test
    void badInputFailsAtOnceNamingTheProblem() throws Exception {
        NullPointerException n =
                assertThrows(NullPointerException.class, () -> EtcdProvider.newLock(ETCD.client(), null));
        assertEquals("name", n.getMessage());
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newLock(ETCD.client(), "  "));
        assertTrue(e.getMessage().contains("name"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class, () -> EtcdOptions.builder().ttl(Duration.ofMillis(500)));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class, () -> EtcdOptions.builder().ttl(Duration.ofMillis(1500)));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        e = assertThrows(
                IllegalArgumentException.class, () -> EtcdOptions.builder().requestTimeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("requestTimeout"), e.getMessage());
        n = assertThrows(NullPointerException.class, () -> EtcdOptions.builder().ttl(null));
        assertEquals("ttl", n.getMessage());
        n = assertThrows(NullPointerException.class, () -> EtcdSession.open(null));
        assertEquals("client", n.getMessage());
        n = assertThrows(NullPointerException.class, () -> EtcdSession.open(ETCD.client(), null));
        assertEquals("options", n.getMessage());
    }

    @Test
    void closeRevokesAnOwnSessionAndNeverClosesTheClient() throws Exception {
        String prefix = uniquePrefix("close");
        LockService a = EtcdProvider.newLock(ETCD.client(), prefix, ttl(30));
        Grant ga = a.lock();
        try (LockService b = EtcdProvider.newLock(ETCD.client(), prefix, ttl(30))) {
            CompletableFuture<Grant> waiting = b.lockAsync();
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> keysUnder(ETCD.client(), prefix).size() == 2);
            a.close();
            // Far sooner than A's 30 s TTL: close() revoked the lease.
            Grant gb = waiting.get(3, SECONDS);
            assertTrue(gb.token().isNewerThan(ga.token()));
            a.done().toCompletableFuture().get(1, SECONDS);
            assertTrue(a.err().isEmpty(), "a plain close is not a loss");
            assertThrows(IllegalStateException.class, a::tryLock);
        }
        // The caller's ETCD.client() still works.
        assertEquals(List.of(), keysUnder(ETCD.client(), prefix));
    }

    @Test
    void everyServiceOfASharedSessionSeesTheLoss() throws Exception {
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(30))) {
            LockService one = session.newLock(uniquePrefix("shared"));
            LockService two = session.newLock(uniquePrefix("shared"));
            one.lock();
            ETCD.client().getLeaseClient().revoke(session.leaseId()).get(5, SECONDS);
            session.probeLease();
            one.done().toCompletableFuture().get(5, SECONDS);
            two.done().toCompletableFuture().get(5, SECONDS);
            session.done().toCompletableFuture().get(5, SECONDS);
            assertTrue(one.err().isPresent());
            assertTrue(two.err().isPresent());
            assertTrue(session.err().isPresent());
        }
    }
}
