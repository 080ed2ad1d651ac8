package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The semaphore's etcd-specific cases: its slot keys outside {@code <prefix>/}, a Go holder's key under the
 * prefix, the exact messages of bad input. The contract (limit, slots, per-slot tokens, zombies, giving up,
 * lost waiters, input) is {@code SemaphoreContract}, run by {@link EtcdSemaphoreContractTest}.
 */
class SemaphoreTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final Duration WAIT = Duration.ofSeconds(20);

    /** @return a new lease of 30 s, as a Go disco holder's */
    private static long goLease() throws Exception {
        return ETCD.client()
                .getLeaseClient()
                .grant(30)
                .get(10, TimeUnit.SECONDS)
                .getID();
    }

    /** Writes what a Go disco holder writes: {@code <prefix>/<its lease id in hex>}, leased. @return the key */
    private static String putGoHolderKey(String prefix, long lease) throws Exception {
        String key = prefix + "/" + Long.toHexString(lease);
        ETCD.client()
                .getKVClient()
                .put(
                        Etcd.bytes(key),
                        Etcd.bytes(""),
                        PutOption.builder().withLeaseId(lease).build())
                .get(10, TimeUnit.SECONDS);
        return key;
    }

    private static List<String> slotKeys(String prefix) throws Exception {
        return Etcd.keysUnder(ETCD.client(), EtcdKeys.SLOT_NAMESPACE + prefix);
    }

    private static List<String> holderKeys(String prefix) throws Exception {
        return Etcd.keysUnder(ETCD.client(), prefix);
    }

    @Test
    void theProviderOpensASemaphoreOnItsOwnSessionWithTheDefaultOptionsLikeItsSiblings() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-provider");
        SemaphoreService s = EtcdProvider.newSemaphore(ETCD.client(), prefix, 2);
        try (s) {
            assertEquals(2, s.limit());
            Permit p = s.acquire(WAIT);
            assertEquals(List.of(p.key()), holderKeys(prefix));
            assertEquals(1, slotKeys(prefix).size());
        }
        assertTrue(s.done().toCompletableFuture().isDone(), "closing it finished the service (and its own session)");
        assertTrue(holderKeys(prefix).isEmpty() && slotKeys(prefix).isEmpty());
    }

    @Test
    void aSlotWhoseHolderKeyIsGoneIsClaimedAgainWithAHigherTokenAndItsOldOwnerCannotFreeIt() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-stale-slot");
        try (EtcdSession sa = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                EtcdSession sb = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                SemaphoreService a = sa.newSemaphore(prefix, 1);
                SemaphoreService b = sb.newSemaphore(prefix, 1)) {
            Permit pa = a.acquire(WAIT);
            ETCD.client().getKVClient().delete(Etcd.bytes(pa.key())).get(10, TimeUnit.SECONDS); // an operator
            a.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertEquals(1, slotKeys(prefix).size(), "A's slot key is still there (its lease lives)");
            Permit pb = b.acquire(WAIT);
            assertEquals(pa.slot(), pb.slot());
            assertTrue(pb.token().isNewerThan(pa.token()));
            assertThrows(SemaphoreLostException.class, a::release);
            a.close();
            assertEquals(1, slotKeys(prefix).size(), "A's release and close leave B's claim alone");
            b.release();
            assertTrue(slotKeys(prefix).isEmpty());
        }
    }

    @Test
    void aKeyOfAnotherClientUnderThePrefixCountsAgainstTheLimit() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-go");
        long lease = goLease();
        String goKey = putGoHolderKey(prefix, lease);
        try (EtcdSession s1 = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                EtcdSession s2 = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                SemaphoreService one = s1.newSemaphore(prefix, 2);
                SemaphoreService two = s2.newSemaphore(prefix, 2)) {
            one.acquire(WAIT);
            CompletableFuture<Permit> waiting = two.acquireAsync();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> holderKeys(prefix).size() == 3);
            assertFalse(waiting.isDone(), "the Go holder and one Java holder fill the limit of 2");
            ETCD.client().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            Permit p = waiting.get(10, TimeUnit.SECONDS);
            assertTrue(p.slot() == 0 || p.slot() == 1);
            assertEquals(2, slotKeys(prefix).size(), "no slot key lies under " + prefix + "/");
            assertTrue(holderKeys(prefix).stream().noneMatch(k -> k.contains("slot")));
        }
    }

    @Test
    void oneSessionHoldsSeveralPermitsEachUnderItsOwnKeyCountedLikeGoHolders() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-one-lease");
        long goLease = goLease();
        try (EtcdSession s = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            String hex = Long.toHexString(s.leaseId());
            SemaphoreService first = s.newSemaphore(prefix, 3);
            SemaphoreService second = s.newSemaphore(prefix, 3);
            Permit p1 = first.acquire(WAIT);
            Permit p2 = second.acquire(WAIT);
            assertEquals(prefix + "/" + hex, p1.key(), "the first holder's key is the Go semaphore's");
            assertEquals(prefix + "/" + hex + "-1", p2.key());
            assertTrue(p1.slot() != p2.slot(), "one slot each");
            assertThrows(IllegalStateException.class, () -> s.newLock(prefix), "the name is this session's semaphore");
            assertThrows(IllegalStateException.class, () -> s.newLock(prefix + "/x"), "nested in it");

            // A Go holder (its key under the prefix, created after ours) fills the limit: it counts our two keys.
            String goKey = putGoHolderKey(prefix, goLease);
            SemaphoreService third = s.newSemaphore(prefix, 3);
            assertTrue(third.tryAcquire().isEmpty(), "two keys of one lease and a Go key fill a limit of 3");
            assertEquals(List.of(p1.key(), p2.key(), goKey).stream().sorted().toList(), holderKeys(prefix));

            second.release();
            second.close();
            SemaphoreService again = s.newSemaphore(prefix, 3); // the freed holder index is taken again
            Permit p3 = again.acquire(WAIT);
            assertEquals(prefix + "/" + hex + "-1", p3.key());
            assertEquals(p2.slot(), p3.slot(), "the freed slot");
            assertTrue(p3.token().isNewerThan(p2.token()));
            third.close();
            again.close();
            first.close();
            assertEquals(List.of(goKey), holderKeys(prefix));
            assertTrue(slotKeys(prefix).isEmpty());
            s.newLock(prefix).close(); // the name is free for another kind once its holders are closed
        } finally {
            ETCD.client().getLeaseClient().revoke(goLease).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badInputAndADifferentLimitAreClearErrors() throws Exception {
        String prefix = Etcd.uniquePrefix("semaphore-input");
        try (EtcdSession s = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
                EtcdSession s2 = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            IllegalArgumentException zero =
                    assertThrows(IllegalArgumentException.class, () -> s.newSemaphore(prefix, 0));
            assertTrue(zero.getMessage().contains("limit must be at least 1"), zero.getMessage());
            assertThrows(NullPointerException.class, () -> s.newSemaphore(null, 2));
            assertThrows(IllegalArgumentException.class, () -> s.newSemaphore("  ", 2));
            try (SemaphoreService first = s.newSemaphore(prefix, 2)) {
                assertEquals(2, first.limit());
                IllegalArgumentException other =
                        assertThrows(IllegalArgumentException.class, () -> s2.newSemaphore(prefix, 3));
                assertTrue(
                        other.getMessage().contains("has limit 2")
                                && other.getMessage().contains("asked for 3"),
                        other.getMessage());
                try (SemaphoreService same = s2.newSemaphore(prefix, 2)) {
                    assertEquals(new SemaphoreService.Stat(2, 0), same.stat());
                }
            }
        }
    }
}
