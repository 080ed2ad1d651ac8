package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWGrant.Mode;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read/write lock against one real etcd member.
 *
 * <p>"No key left behind" is asserted precisely: the keys under {@code <prefix>/} are exactly the
 * current holders' keys ({@code <prefix>/read/<lease>}, {@code <prefix>/write/<lease>}): the phase
 * marker lies outside {@code <prefix>/}, where no Go recipe waits on it.
 */
class RWLockTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    // ---------------------------------------------------------------- 1

    @Test
    void threeReadersHoldAtOnceAndAWriterWaitsForAllOfThem() throws Exception {
        String prefix = uniquePrefix("rw-readers");
        try (EtcdSession s1 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession s2 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession s3 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession sw = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService r1 = s1.newRWLock(prefix);
            RWLockService r2 = s2.newRWLock(prefix);
            RWLockService r3 = s3.newRWLock(prefix);
            RWLockService w = sw.newRWLock(prefix);

            RWGrant g1 = r1.rLock(Duration.ofSeconds(5));
            RWGrant g2 = r2.rLock(Duration.ofSeconds(5));
            RWGrant g3 = r3.rLock(Duration.ofSeconds(5));
            for (RWGrant g : List.of(g1, g2, g3)) {
                assertEquals(Mode.READ, g.mode());
            }
            assertEquals(readKey(s1, prefix), g1.key());
            assertOnlyHolders(prefix, g1.key(), g2.key(), g3.key());

            CompletableFuture<RWGrant> writing = w.lockAsync();
            awaitKey(prefix, writeKey(sw, prefix));
            r1.rUnlock();
            assertStillWaiting(writing);
            r2.rUnlock();
            assertStillWaiting(writing);
            r3.rUnlock();
            RWGrant gw = writing.get(5, SECONDS);
            assertEquals(Mode.WRITE, gw.mode());
            assertEquals(writeKey(sw, prefix), gw.key());
            for (RWGrant g : List.of(g1, g2, g3)) {
                assertTrue(gw.token().isNewerThan(g.token()), "writer " + gw.token() + " vs reader " + g.token());
            }
            assertOnlyHolders(prefix, gw.key());
            w.unlock();
            assertOnlyHolders(prefix);
        }
    }

    // ---------------------------------------------------------------- 2

    @Test
    void readersArrivingWhileAWriterWaitsQueueBehindIt() throws Exception {
        String prefix = uniquePrefix("rw-fair");
        try (EtcdSession sr1 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession sw1 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession sr2 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession sw2 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession sr3 = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService r1 = sr1.newRWLock(prefix);
            RWLockService w1 = sw1.newRWLock(prefix);
            RWLockService r2 = sr2.newRWLock(prefix);
            RWLockService w2 = sw2.newRWLock(prefix);
            RWLockService r3 = sr3.newRWLock(prefix);
            List<String> order = Collections.synchronizedList(new ArrayList<>());

            RWGrant gr1 = r1.rLock(Duration.ofSeconds(5));
            // Registration order r1 < w1 < r2 < w2 < r3 (each key is in etcd before the next asks).
            CompletableFuture<RWGrant> fw1 = track(w1.lockAsync(), "w1", order);
            awaitKey(prefix, writeKey(sw1, prefix));
            CompletableFuture<RWGrant> fr2 = track(r2.rLockAsync(), "r2", order);
            awaitKey(prefix, readKey(sr2, prefix));
            CompletableFuture<RWGrant> fw2 = track(w2.lockAsync(), "w2", order);
            awaitKey(prefix, writeKey(sw2, prefix));
            CompletableFuture<RWGrant> fr3 = track(r3.rLockAsync(), "r3", order);
            awaitKey(prefix, readKey(sr3, prefix));

            // r2 is a reader and r1 reads, but a writer asked in between: r2 does not join r1.
            assertStillWaiting(fr2);
            assertFalse(fw1.isDone());
            r1.rUnlock();
            RWGrant gw1 = fw1.get(5, SECONDS);
            assertStillWaiting(fr2);
            w1.unlock();
            RWGrant gr2 = fr2.get(5, SECONDS);
            assertStillWaiting(fr3); // r3 queues behind w2, although a reader holds
            assertFalse(fw2.isDone());
            r2.rUnlock();
            RWGrant gw2 = fw2.get(5, SECONDS);
            assertStillWaiting(fr3);
            w2.unlock();
            RWGrant gr3 = fr3.get(5, SECONDS);

            assertEquals(List.of("w1", "r2", "w2", "r3"), order);
            List<RWGrant> inOrder = List.of(gr1, gw1, gr2, gw2, gr3);
            for (int i = 1; i < inOrder.size(); i++) {
                assertTrue(inOrder.get(i).token().isNewerThan(inOrder.get(i - 1).token()), "tokens " + inOrder);
            }
            r3.rUnlock();
            assertOnlyHolders(prefix);
        }
    }

    // ---------------------------------------------------------------- 3

    @Test
    void readersOfAPhaseShareOneTokenStrictlyBetweenTheWritersAndOneGuardServesAll() throws Exception {
        String prefix = uniquePrefix("rw-tokens");
        Guard guard = Guard.create();
        List<EtcdSession> sessions = new ArrayList<>();
        try {
            RWLockService a1 = open(sessions, prefix);
            RWLockService a2 = open(sessions, prefix);
            RWLockService a3 = open(sessions, prefix);
            RWLockService w1 = open(sessions, prefix);
            RWLockService b1 = open(sessions, prefix);
            RWLockService b2 = open(sessions, prefix);
            RWLockService w2 = open(sessions, prefix);
            RWLockService c1 = open(sessions, prefix);
            RWLockService c2 = open(sessions, prefix);
            RWLockService w3 = open(sessions, prefix);

            // Phase A: three readers; w1 queues; b1 and b2 arrive behind w1.
            RWGrant ga1 = a1.rLock(Duration.ofSeconds(5));
            RWGrant ga2 = a2.rLock(Duration.ofSeconds(5));
            CompletableFuture<RWGrant> fw1 = w1.lockAsync();
            awaitOwnerCount(prefix, 3);
            CompletableFuture<RWGrant> fb1 = b1.rLockAsync();
            awaitOwnerCount(prefix, 4);
            // a3 asks after w1 too: it belongs to phase B, not A.
            CompletableFuture<RWGrant> fa3 = a3.rLockAsync();
            awaitOwnerCount(prefix, 5);
            CompletableFuture<RWGrant> fb2 = b2.rLockAsync();
            awaitOwnerCount(prefix, 6);
            assertEquals(ga1.token(), ga2.token(), "readers of one phase share the token");
            // The readers use the resource, in any order.
            guard.check(ga2.token());
            guard.check(ga1.token());
            a1.rUnlock();
            guard.check(ga2.token());
            a2.rUnlock();

            RWGrant gw1 = fw1.get(5, SECONDS);
            guard.check(gw1.token());
            w1.unlock();

            // Phase B: b1, a3, b2, admitted together after w1.
            RWGrant gb1 = fb1.get(5, SECONDS);
            RWGrant ga3 = fa3.get(5, SECONDS);
            RWGrant gb2 = fb2.get(5, SECONDS);
            assertEquals(gb1.token(), gb2.token());
            assertEquals(gb1.token(), ga3.token());
            guard.check(gb2.token());
            guard.check(ga3.token());
            CompletableFuture<RWGrant> fw2 = w2.lockAsync();
            awaitOwnerCount(prefix, 4);
            CompletableFuture<RWGrant> fc1 = c1.rLockAsync();
            awaitOwnerCount(prefix, 5);
            guard.check(gb1.token());
            b1.rUnlock();
            b2.rUnlock();
            a3.rUnlock();

            RWGrant gw2 = fw2.get(5, SECONDS);
            guard.check(gw2.token());
            w2.unlock();

            // Phase C: c1, then, after c1 has left and before any writer, c2: still phase C.
            RWGrant gc1 = fc1.get(5, SECONDS);
            guard.check(gc1.token());
            c1.rUnlock();
            RWGrant gc2 = c2.rLock(Duration.ofSeconds(5));
            assertEquals(gc1.token(), gc2.token(), "no writer in between: same phase, same token");
            guard.check(gc2.token());
            c2.rUnlock();

            RWGrant gw3 = w3.tryLock().orElseThrow();
            guard.check(gw3.token());
            w3.unlock();

            FencingToken a = ga1.token();
            FencingToken b = gb1.token();
            FencingToken c = gc1.token();
            assertTrue(gw1.token().isNewerThan(a) && b.isNewerThan(gw1.token()), "A " + a + " < W1 " + gw1.token() + " < B " + b);
            assertTrue(gw2.token().isNewerThan(b) && c.isNewerThan(gw2.token()), "B " + b + " < W2 " + gw2.token() + " < C " + c);
            assertTrue(gw3.token().isNewerThan(c), "C " + c + " < W3 " + gw3.token());
            assertEquals(Optional.of(gw3.token()), guard.highWater());
            // And the same guard rejects every earlier owner.
            for (FencingToken stale : List.of(a, gw1.token(), b, gw2.token(), c)) {
                assertThrows(TokenStaleException.class, () -> guard.check(stale));
            }
            assertOnlyHolders(prefix);
        } finally {
            sessions.forEach(EtcdSession::close);
        }
    }

    // ---------------------------------------------------------------- 4

    @Test
    void zombieWriterAndZombieReaderAreRejectedByTheGuard() throws Exception {
        String prefix = uniquePrefix("rw-zombie");
        Guard guard = Guard.create();
        try (EtcdSession zs = EtcdSession.open(ETCD.client(), ttl(2));
             EtcdSession s1 = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession s2 = EtcdSession.open(ETCD.client(), ttl(2));
             EtcdSession sw = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService zombieWriter = zs.newRWLock(prefix);
            RWLockService r1 = s1.newRWLock(prefix);
            RWLockService r2 = s2.newRWLock(prefix);
            RWLockService w = sw.newRWLock(prefix);

            RWGrant gz = zombieWriter.lock(Duration.ofSeconds(5));
            guard.check(gz.token()); // writes while it legitimately holds
            zs.orphan(); // freezes: its lease expires after 2 s

            CompletableFuture<RWGrant> f1 = r1.rLockAsync();
            CompletableFuture<RWGrant> f2 = r2.rLockAsync();
            RWGrant g1 = f1.get(10, SECONDS);
            RWGrant g2 = f2.get(10, SECONDS);
            assertEquals(g1.token(), g2.token());
            assertTrue(g1.token().isNewerThan(gz.token()));
            guard.check(g1.token()); // a reader touches the resource

            TokenStaleException stale = assertThrows(TokenStaleException.class, () -> guard.check(gz.token()));
            assertEquals(gz.token(), stale.token());
            zombieWriter.done().toCompletableFuture().get(5, SECONDS);
            assertInstanceOf(RWLockLostException.class, zombieWriter.err().orElseThrow());
            assertTrue(zombieWriter.held().isEmpty());
            assertThrows(RWLockLostException.class, zombieWriter::rLock, "a lost service cannot acquire again");

            // Now a reader freezes while holding; a writer gets in after its lease expires and writes.
            s2.orphan();
            r1.rUnlock();
            RWGrant gw = w.lock(Duration.ofSeconds(10));
            guard.check(gw.token());
            assertThrows(TokenStaleException.class, () -> guard.check(g2.token()), "the frozen reader's phase has ended");
            assertThrows(TokenStaleException.class, () -> guard.check(g1.token()), "so has the released reader's");
            r2.done().toCompletableFuture().get(5, SECONDS);
            assertInstanceOf(RWLockLostException.class, r2.err().orElseThrow());
            w.unlock();
            assertOnlyHolders(prefix);
        }
    }

    // ---------------------------------------------------------------- 5

    @Test
    void givingUpLeavesOnlyTheHoldersKeys() throws Exception {
        String prefix = uniquePrefix("rw-giveup");
        try (EtcdSession hs = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession os = EtcdSession.open(ETCD.client(), ttl(10));
             EtcdSession ws = EtcdSession.open(ETCD.client(), ttl(10))) {
            RWLockService holder = hs.newRWLock(prefix);
            RWLockService other = os.newRWLock(prefix);
            RWLockService waitingWriter = ws.newRWLock(prefix);

            // A writer holds: both modes are blocked.
            RWGrant held = holder.lock();
            giveUpEveryWay(prefix, other, os, Mode.READ, held.key());
            giveUpEveryWay(prefix, other, os, Mode.WRITE, held.key());
            holder.unlock();

            // A reader holds: a writer is blocked, a reader is not...
            RWGrant read = holder.rLock();
            RWGrant shared = other.tryRLock().orElseThrow();
            assertEquals(read.token(), shared.token());
            other.rUnlock();
            giveUpEveryWay(prefix, other, os, Mode.WRITE, read.key());
            // ...unless a writer waits: then a reader is blocked too.
            CompletableFuture<RWGrant> writing = waitingWriter.lockAsync();
            awaitKey(prefix, writeKey(ws, prefix));
            giveUpEveryWay(prefix, other, os, Mode.READ, read.key(), writeKey(ws, prefix));
            holder.rUnlock();
            RWGrant gw = writing.get(5, SECONDS);
            waitingWriter.unlock();

            // After all that, the other owner still gets in once the lock is free.
            RWGrant g = other.lock(Duration.ofSeconds(5));
            assertTrue(g.token().isNewerThan(gw.token()));
            other.unlock();
            assertOnlyHolders(prefix);
        }
    }

    /** tryX is empty, X(timeout) times out, an interrupted X and a cancelled XAsync: each leaves only {@code holders}. */
    private static void giveUpEveryWay(String prefix, RWLockService other, EtcdSession os, Mode mode, String... holders)
            throws Exception {
        String ownKey = mode == Mode.READ ? readKey(os, prefix) : writeKey(os, prefix);

        assertTrue((mode == Mode.READ ? other.tryRLock() : other.tryLock()).isEmpty(), mode + ": try must be empty when blocked");
        assertOnlyHolders(prefix, holders);

        assertThrows(TimeoutException.class, () -> {
            if (mode == Mode.READ) {
                other.rLock(Duration.ofMillis(500));
            } else {
                other.lock(Duration.ofMillis(500));
            }
        });
        assertOnlyHolders(prefix, holders);

        CompletableFuture<Throwable> interrupted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                if (mode == Mode.READ) {
                    other.rLock();
                } else {
                    other.lock();
                }
                interrupted.complete(null);
            } catch (Throwable e) {
                interrupted.complete(e);
            }
        });
        t.start();
        awaitKey(prefix, ownKey);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, interrupted.get(5, SECONDS));
        assertOnlyHolders(prefix, holders);

        CompletableFuture<RWGrant> async = mode == Mode.READ ? other.rLockAsync() : other.lockAsync();
        awaitKey(prefix, ownKey);
        assertTrue(async.cancel(true));
        assertThrows(CancellationException.class, async::join);
        await().atMost(Duration.ofSeconds(5)).until(() -> !ownerKeys(prefix).contains(ownKey));
        assertOnlyHolders(prefix, holders);
        assertTrue(other.held().isEmpty());
    }

    @Test
    void aWaiterWhoseLeaseIsRevokedFailsAndNeverAcquires() throws Exception {
        for (Mode mode : Mode.values()) {
            String prefix = uniquePrefix("rw-revoked");
            try (RWLockService holder = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(10));
                 EtcdSession waiterSession = EtcdSession.open(ETCD.client(), ttl(30))) {
                // The holder holds the other mode, so the waiter is blocked either way.
                RWGrant held = mode == Mode.READ ? holder.lock() : holder.rLock();
                RWLockService waiter = waiterSession.newRWLock(prefix);
                CompletableFuture<RWGrant> waiting = mode == Mode.READ ? waiter.rLockAsync() : waiter.lockAsync();
                awaitKey(prefix, mode == Mode.READ ? readKey(waiterSession, prefix) : writeKey(waiterSession, prefix));

                ETCD.client().getLeaseClient().revoke(waiterSession.leaseId()).get(5, SECONDS);

                ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
                assertInstanceOf(RWLockLostException.class, e.getCause(), mode + " waiter");
                assertOnlyHolders(prefix, held.key());
                waiter.done().toCompletableFuture().get(5, SECONDS);
                assertTrue(waiter.err().isPresent());
                if (mode == Mode.READ) {
                    holder.unlock();
                } else {
                    holder.rUnlock();
                }
                assertTrue(waiter.held().isEmpty(), "the revoked waiter must never report a grant");
                assertOnlyHolders(prefix);
            }
        }
    }

    @Test
    void compactionWhileWaitingIsNotAFailure() throws Exception {
        for (Mode mode : Mode.values()) {
            String prefix = uniquePrefix("rw-compact");
            try (RWLockService holder = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(10));
                 RWLockService waiter = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(10))) {
                RWGrant held = mode == Mode.READ ? holder.lock() : holder.rLock();
                CompletableFuture<RWGrant> waiting = mode == Mode.READ ? waiter.rLockAsync() : waiter.lockAsync();
                await().atMost(Duration.ofSeconds(5)).until(() -> ownerKeys(prefix).size() == 2);
                for (int i = 0; i < 5; i++) {
                    ETCD.client().getKVClient().put(Etcd.bytes(prefix + "-noise"), Etcd.bytes("v" + i)).get(5, SECONDS);
                }
                ETCD.client().getKVClient().compact(Etcd.revision(ETCD.client())).get(5, SECONDS);
                assertStillWaiting(waiting);
                if (mode == Mode.READ) {
                    holder.unlock();
                } else {
                    holder.rUnlock();
                }
                RWGrant g = waiting.get(5, SECONDS);
                assertEquals(mode, g.mode());
                assertTrue(g.token().isNewerThan(held.token()));
            }
        }
    }

    // ---------------------------------------------------------------- 6

    @Test
    void mixedStressWritersAreAloneAndReadersShare() throws Exception {
        String prefix = uniquePrefix("rw-stress");
        int readers = 4;
        int writers = 2;
        int rounds = 20;
        Object room = new Object();
        int[] inside = new int[2]; // [readers, writers], guarded by room
        int[] maxReaders = new int[1];
        AtomicReference<String> violation = new AtomicReference<>();
        List<RWGrant> entries = new ArrayList<>(); // in the order the owners entered, guarded by room
        Guard guard = Guard.create(); // every owner uses it while inside: none may be rejected
        ExecutorService pool = Executors.newFixedThreadPool(readers + writers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < readers + writers; i++) {
                boolean writer = i >= readers;
                futures.add(pool.submit(() -> {
                    try (RWLockService rw = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(10))) {
                        for (int r = 0; r < rounds; r++) {
                            RWGrant g = writer ? rw.lock(Duration.ofSeconds(30)) : rw.rLock(Duration.ofSeconds(30));
                            synchronized (room) {
                                inside[writer ? 1 : 0]++;
                                if (inside[1] > 1 || (inside[1] == 1 && inside[0] > 0)) {
                                    violation.compareAndSet(null, "inside together: " + inside[0] + " readers, " + inside[1] + " writers");
                                }
                                maxReaders[0] = Math.max(maxReaders[0], inside[0]);
                                entries.add(g);
                                room.notifyAll();
                                if (!writer) {
                                    // Linger a moment for company: bounded, woken as soon as another reader enters.
                                    long deadline = System.nanoTime() + MILLISECONDS.toNanos(20);
                                    long left;
                                    while (inside[0] < 2 && (left = deadline - System.nanoTime()) > 0) {
                                        room.wait(Math.max(1, left / 1_000_000));
                                    }
                                }
                            }
                            guard.check(g.token());
                            synchronized (room) {
                                inside[writer ? 1 : 0]--;
                            }
                            if (writer) {
                                rw.unlock();
                            } else {
                                rw.rUnlock();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(null, violation.get());
        assertTrue(maxReaders[0] >= 2, "readers were never observed inside together");
        assertEquals((readers + writers) * rounds, entries.size());
        assertTokenRule(entries);
        assertOnlyHolders(prefix);
    }

    // ---------------------------------------------------------------- 7

    @Test
    void releasingTheModeNotHeldFailsAndReleasesNothing() throws Exception {
        String prefix = uniquePrefix("rw-mode");
        try (EtcdSession s = EtcdSession.open(ETCD.client(), ttl(10));
             RWLockService other = EtcdProvider.newRWLock(ETCD.client(), prefix, ttl(10))) {
            RWLockService rw = s.newRWLock(prefix);

            RWGrant w = rw.lock();
            IllegalStateException e = assertThrows(IllegalStateException.class, rw::rUnlock);
            assertTrue(e.getMessage().contains("rUnlock"), e.getMessage());
            assertEquals(Optional.of(w), rw.held());
            assertOnlyHolders(prefix, w.key());
            assertTrue(other.tryRLock().isEmpty(), "the write grant is still held");
            assertThrows(IllegalStateException.class, rw::rLock, "no downgrade");
            assertThrows(IllegalStateException.class, rw::tryRLock, "no downgrade");
            assertEquals(w, rw.lock(), "lock() while holding the write grant returns it");
            rw.unlock();
            assertOnlyHolders(prefix);

            RWGrant r = rw.rLock();
            e = assertThrows(IllegalStateException.class, rw::unlock);
            assertTrue(e.getMessage().contains("unlock"), e.getMessage());
            assertEquals(Optional.of(r), rw.held());
            assertOnlyHolders(prefix, r.key());
            assertTrue(other.tryLock().isEmpty(), "the read grant is still held");
            assertThrows(IllegalStateException.class, rw::lock, "no upgrade");
            assertThrows(IllegalStateException.class, rw::lockAsync, "no upgrade");
            assertEquals(r, rw.rLock(), "rLock() while holding a read grant returns it");
            rw.rUnlock();
            assertOnlyHolders(prefix);
            assertTrue(other.tryLock().isPresent());
            rw.rUnlock(); // holding nothing: a no-op
            rw.unlock();
        }
    }

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
            ETCD.client().getKVClient().put(Etcd.bytes(readKey(os, prefix)), ByteSequence.EMPTY, leased).get(5, SECONDS);
            assertTrue(other.tryRLock().isEmpty(), "a writer holds: the leftover read key must not admit");
            assertOnlyHolders(prefix, w.key());
            holder.unlock();

            RWGrant r = holder.rLock();
            ETCD.client().getKVClient().put(Etcd.bytes(writeKey(os, prefix)), ByteSequence.EMPTY, leased).get(5, SECONDS);
            assertTrue(other.tryLock().isEmpty(), "a reader holds: the leftover write key must not admit");
            assertOnlyHolders(prefix, r.key());
            holder.rUnlock();

            // With nobody ahead, a leftover own key is simply adopted.
            ETCD.client().getKVClient().put(Etcd.bytes(writeKey(os, prefix)), ByteSequence.EMPTY, leased).get(5, SECONDS);
            RWGrant g = other.tryLock().orElseThrow();
            assertTrue(g.token().isNewerThan(r.token()));
            other.unlock();
            assertOnlyHolders(prefix);
        }
    }

    @Test
    void badInputFailsAtOnceNamingTheProblem() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newRWLock(ETCD.client(), null));
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> EtcdProvider.newRWLock(ETCD.client(), " "));
        assertTrue(e.getMessage().contains("prefix"), e.getMessage());
        String prefix = uniquePrefix("rw-input");
        try (EtcdSession session = EtcdSession.open(ETCD.client(), ttl(5))) {
            RWLockService first = session.newRWLock(prefix);
            IllegalStateException dup = assertThrows(IllegalStateException.class, () -> session.newRWLock(prefix));
            assertTrue(dup.getMessage().contains(prefix), dup.getMessage());
            assertThrows(IllegalStateException.class, () -> session.newLock(prefix), "one service per prefix and session");
            assertThrows(IllegalArgumentException.class, () -> first.rLock(Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> first.lock(Duration.ofMillis(-1)));
            first.close();
            assertThrows(IllegalStateException.class, first::tryRLock, "closed");
            session.newRWLock(prefix).close();
        }
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

    /**
     * In use order: a writer's token is above every earlier token; the readers between two writers
     * share one token, above the previous writer's (and so, by the first rule, below the next one's).
     */
    static void assertTokenRule(List<RWGrant> inUseOrder) {
        long max = 0;
        long lastWriter = 0;
        long phase = 0; // the current read phase's token, 0 before its first reader
        for (int i = 0; i < inUseOrder.size(); i++) {
            RWGrant g = inUseOrder.get(i);
            long t = g.token().value();
            if (g.mode() == Mode.WRITE) {
                assertTrue(t > max, "writer #" + i + " token " + t + " not above every earlier token (max " + max + ")");
                lastWriter = t;
                phase = 0;
            } else if (phase == 0) {
                assertTrue(t > lastWriter, "reader #" + i + " token " + t + " not above the previous writer's " + lastWriter);
                phase = t;
            } else {
                assertEquals(phase, t, "reader #" + i + " is in the read phase of token " + phase);
            }
            max = Math.max(max, t);
        }
    }

    private static RWLockService open(List<EtcdSession> sessions, String prefix) {
        EtcdSession s = EtcdSession.open(ETCD.client(), ttl(10));
        sessions.add(s);
        return s.newRWLock(prefix);
    }

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

    static void awaitKey(String prefix, String key) {
        await().atMost(Duration.ofSeconds(5)).until(() -> ownerKeys(prefix).contains(key));
    }

    static void awaitOwnerCount(String prefix, int n) {
        await().atMost(Duration.ofSeconds(5)).until(() -> ownerKeys(prefix).size() == n);
    }

    /** A bounded wait showing that {@code f} stays blocked (it must not complete while its predecessor holds). */
    static void assertStillWaiting(CompletableFuture<RWGrant> f) {
        assertThrows(TimeoutException.class, () -> f.get(300, MILLISECONDS), "must still be waiting");
    }

    static CompletableFuture<RWGrant> track(CompletableFuture<RWGrant> f, String name, List<String> order) {
        f.thenRun(() -> order.add(name));
        return f;
    }
}
