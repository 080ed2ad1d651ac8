package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.Held;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Try-with-resources grants release the grant only; the asynchronous releases complete off the session threads. */
class ScopedAndAsyncReleaseTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Completes with the name of the thread that ran a dependent stage of {@code f}. */
    private static String threadOf(CompletableFuture<?> f) throws Exception {
        return f.handle((v, e) -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
    }

    private static void assertNotASessionThread(String name) {
        assertFalse(name.startsWith("disco-session") || name.startsWith("disco-lease"), name);
    }

    @Test
    void aScopedLockReleasesTheGrantAndKeepsTheService() throws Exception {
        String prefix = Etcd.uniquePrefix("scoped-lock");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10)); LockService lock = session.newLock(prefix)) {
            long first;
            try (Held<Grant> held = lock.acquire(WAIT)) {
                first = held.token().value();
                assertEquals(held.grant().token(), lock.held().orElseThrow().token());
                assertEquals(1, Etcd.keysUnder(ETCD.client(), prefix).size());
            }
            assertTrue(lock.held().isEmpty());
            assertTrue(Etcd.keysUnder(ETCD.client(), prefix).isEmpty());
            try (Held<Grant> again = lock.acquire(WAIT)) {
                assertTrue(again.token().value() > first, "the service is still usable");
            }
        }
    }

    @Test
    void aScopedHoldWhoseGrantWasLostThrowsTheLossOnClose() throws Exception {
        String prefix = Etcd.uniquePrefix("scoped-lost");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10)); LockService lock = session.newLock(prefix)) {
            Held<Grant> held = lock.acquire(WAIT);
            ETCD.client().getKVClient().delete(Etcd.bytes(held.grant().key())).get(10, TimeUnit.SECONDS);
            lock.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertThrows(LockLostException.class, held::close);
            held.close(); // once only
        }
    }

    @Test
    void scopedReadAndWriteHolds() throws Exception {
        String prefix = Etcd.uniquePrefix("scoped-rw");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10)); RWLockService rw = session.newRWLock(prefix)) {
            long read;
            try (Held<RWGrant> r = rw.acquireRead(WAIT)) {
                read = r.token().value();
                assertEquals(RWGrant.Mode.READ, r.grant().mode());
            }
            try (Held<RWGrant> w = rw.acquireWrite(WAIT)) {
                assertEquals(RWGrant.Mode.WRITE, w.grant().mode());
                assertTrue(w.token().value() > read);
            }
            assertTrue(rw.held().isEmpty());
            assertTrue(Etcd.keysUnder(ETCD.client(), prefix).isEmpty());
        }
    }

    @Test
    void aScopedTermResignsAndKeepsTheCandidate() throws Exception {
        String prefix = Etcd.uniquePrefix("scoped-election");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10)); ElectionService e = session.newElection(prefix)) {
            try (Held<Leadership> term = e.lead("a", WAIT)) {
                assertEquals("a", term.grant().value());
                assertEquals(term.grant(), e.leader().orElseThrow());
            }
            assertTrue(e.held().isEmpty());
            assertTrue(e.leader().isEmpty(), "resigned");
            try (Held<Leadership> again = e.lead("b", WAIT)) {
                assertEquals("b", again.grant().value());
            }
        }
    }

    @Test
    void asynchronousReleasesCompleteOffTheSessionThreads() throws Exception {
        String prefix = Etcd.uniquePrefix("async-release");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10));
             LockService lock = session.newLock(prefix + "/lock");
             RWLockService rw = session.newRWLock(prefix + "/rw");
             ElectionService election = session.newElection(prefix + "/election")) {
            lock.lock(WAIT);
            CompletableFuture<Void> unlocked = lock.unlockAsync();
            assertNotASessionThread(threadOf(unlocked));
            assertTrue(lock.held().isEmpty());
            assertTrue(Etcd.keysUnder(ETCD.client(), prefix + "/lock").isEmpty());
            unlocked.get(1, TimeUnit.SECONDS);
            lock.unlockAsync().get(10, TimeUnit.SECONDS); // nothing held: completes normally

            rw.rLock(WAIT);
            assertNotASessionThread(threadOf(rw.rUnlockAsync()));
            rw.lock(WAIT);
            ExecutionException wrongMode = assertThrows(ExecutionException.class, () -> rw.rUnlockAsync().get(10, TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, wrongMode.getCause());
            assertNotASessionThread(threadOf(rw.unlockAsync()));
            assertTrue(Etcd.keysUnder(ETCD.client(), prefix + "/rw/").isEmpty());

            election.campaign("a", WAIT);
            CompletableFuture<Leadership> proclaimed = election.proclaimAsync("b");
            assertNotASessionThread(threadOf(proclaimed));
            assertEquals("b", proclaimed.get(1, TimeUnit.SECONDS).value());
            assertNotASessionThread(threadOf(election.resignAsync()));
            assertTrue(election.leader().isEmpty());
        }
    }

    @Test
    void anAsynchronousReleaseOfALostGrantFailsWithTheLoss() throws Exception {
        String prefix = Etcd.uniquePrefix("async-lost");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10)); LockService lock = session.newLock(prefix)) {
            Grant g = lock.lock(WAIT);
            ETCD.client().getKVClient().delete(Etcd.bytes(g.key())).get(10, TimeUnit.SECONDS);
            lock.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
            ExecutionException e = assertThrows(ExecutionException.class, () -> lock.unlockAsync().get(10, TimeUnit.SECONDS));
            assertInstanceOf(LockLostException.class, e.getCause());
        }
    }

    @Test
    void closeAsyncClosesOffTheCallersThread() throws Exception {
        String prefix = Etcd.uniquePrefix("close-async");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), Etcd.ttl(10))) {
            LockService lock = session.newLock(prefix);
            lock.lock(WAIT);
            CompletableFuture<Void> closed = lock.closeAsync();
            assertNotASessionThread(threadOf(closed));
            closed.get(10, TimeUnit.SECONDS);
            lock.done().toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertTrue(Etcd.keysUnder(ETCD.client(), prefix).isEmpty());
            assertFalse(session.done().toCompletableFuture().isDone(), "a shared session stays open");
        }
    }
}
