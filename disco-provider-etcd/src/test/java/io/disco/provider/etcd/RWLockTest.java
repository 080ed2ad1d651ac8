package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read/write lock's etcd-specific cases: its key layout, rule 1 of the create Txn, the provider's
 * factories. The contract (readers share, writers alone, phases and tokens, zombies, giving up, revoked
 * waiters, compaction, misuse, close) is {@code RWLockContract}, run by {@link EtcdRWLockContractTest}.
 *
 * <p>"No key left behind" is asserted precisely: the keys under {@code <prefix>/} are exactly the
 * current holders' keys ({@code <prefix>/read/<lease>}, {@code <prefix>/write/<lease>}): the phase
 * marker lies outside {@code <prefix>/}, where no Go recipe waits on it.
 */
class RWLockTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    /**
     * Rule 1: when the own key already exists (a leftover of this lease), the create Txn takes its Else
     * branch, where jetcd lists the own key at index 0 and the first-created key of the wait range at
     * index 1. Reading index 0 there would see the own key as "first" and wrongly admit.
     */
    @Test
    void anExistingOwnKeyIsNotMistakenForTheFirstInLine() throws Exception {
        String prefix = uniquePrefix("rw-rule1");
        try (EtcdSession hs = EtcdSession.open(ETCD.client(), ttl(10));
                EtcdSession os = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService holder = hs.newRWLock(prefix);
            RWLockService other = os.newRWLock(prefix);
            PutOption leased = PutOption.builder().withLeaseId(os.leaseId()).build();

            RWGrant w = holder.lock();
            ETCD.client()
                    .getKVClient()
                    .put(Etcd.bytes(readKey(os, prefix)), ByteSequence.EMPTY, leased)
                    .get(5, SECONDS);
            assertTrue(other.tryRLock().isEmpty(), "a writer holds: the leftover read key must not admit");
            assertOnlyHolders(prefix, w.key());
            holder.unlock();

            RWGrant r = holder.rLock();
            ETCD.client()
                    .getKVClient()
                    .put(Etcd.bytes(writeKey(os, prefix)), ByteSequence.EMPTY, leased)
                    .get(5, SECONDS);
            assertTrue(other.tryLock().isEmpty(), "a reader holds: the leftover write key must not admit");
            assertOnlyHolders(prefix, r.key());
            holder.rUnlock();

            // With nobody ahead, a leftover own key is simply adopted.
            ETCD.client()
                    .getKVClient()
                    .put(Etcd.bytes(writeKey(os, prefix)), ByteSequence.EMPTY, leased)
                    .get(5, SECONDS);
            RWGrant g = other.tryLock().orElseThrow();
            assertTrue(g.token().isNewerThan(r.token()));
            other.unlock();
            assertOnlyHolders(prefix);
        }
    }

    /** The keys are etcd's Go recipe's: {@code <prefix>/read/<lease hex>} and {@code <prefix>/write/<lease hex>}. */
    @Test
    void keysAreTheGoRecipesLayout() throws Exception {
        String prefix = uniquePrefix("rw-layout");
        try (EtcdSession sr = EtcdSession.open(ETCD.client(), ttl(10));
                EtcdSession sw = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService r = sr.newRWLock(prefix);
            RWLockService w = sw.newRWLock(prefix);
            RWGrant gr = r.rLock(Duration.ofSeconds(5));
            assertEquals(readKey(sr, prefix), gr.key());
            CompletableFuture<RWGrant> writing = w.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> ownerKeys(prefix).contains(writeKey(sw, prefix)));
            assertOnlyHolders(prefix, gr.key(), writeKey(sw, prefix));
            r.rUnlock();
            RWGrant gw = writing.get(5, SECONDS);
            assertEquals(writeKey(sw, prefix), gw.key());
            w.unlock();
            assertOnlyHolders(prefix);
        }
    }

    @Test
    void badInputFailsAtOnceNamingTheProblem() throws Exception {
        assertEquals(
                "name",
                assertThrows(NullPointerException.class, () -> EtcdProvider.newRWLock(ETCD.client(), null))
                        .getMessage());
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newRWLock(ETCD.client(), " "));
        assertTrue(e.getMessage().contains("name"), e.getMessage());
    }

    @Test
    void closeReleasesAndRevokesAnOwnSession() throws Exception {
        String prefix = uniquePrefix("rw-close");
        RWLockService a = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(30));
        RWGrant ga = a.rLock();
        try (EtcdSession shared = EtcdSession.open(ETCD.client(), ttl(30));
                RWLockService c = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(30))) {
            CompletableFuture<RWGrant> waiting = c.lockAsync();
            await().atMost(Duration.ofSeconds(5)).until(() -> ownerKeys(prefix).size() == 2);
            a.close();
            RWGrant gc = waiting.get(3, SECONDS); // far sooner than a's 30 s TTL: close() revoked the lease
            assertTrue(gc.token().isNewerThan(ga.token()));
            a.done().toCompletableFuture().get(1, SECONDS);
            assertTrue(a.err().isEmpty(), "a plain close is not a loss");
            c.unlock();

            RWLockService b = shared.newRWLock(prefix);
            b.lock();
            b.close();
            assertOnlyHolders(prefix);
            assertFalse(shared.done().toCompletableFuture().isDone(), "a shared session stays open");
        }
    }

    // ---------------------------------------------------------------- helpers

    static String readKey(EtcdSession s, String prefix) {
        return prefix + "/read/" + EtcdSession.hex(s.leaseId());
    }

    static String writeKey(EtcdSession s, String prefix) {
        return prefix + "/write/" + EtcdSession.hex(s.leaseId());
    }

    /** The keys of owners (holders and waiters) under {@code prefix}: every key there. */
    static List<String> ownerKeys(String prefix) throws Exception {
        return keysUnder(ETCD.client(), prefix);
    }

    /** Exactly {@code holders} are left under {@code prefix}. */
    static void assertOnlyHolders(String prefix, String... holders) throws Exception {
        List<String> expected = new ArrayList<>(List.of(holders));
        Collections.sort(expected);
        List<String> keys = ownerKeys(prefix);
        assertEquals(expected, keys, "keys under " + prefix + "/");
        for (String k : keys) {
            assertTrue(k.startsWith(prefix + "/read/") || k.startsWith(prefix + "/write/"), k);
        }
    }
}
