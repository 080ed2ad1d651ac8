package io.disco.contract;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWGrant.Mode;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The {@link RWLockService} contract: readers share, a writer is alone, arrival order is kept (a reader that
 * comes while a writer waits queues behind it), readers of one phase share one token strictly between the
 * writers' so one plain guard serves all, zombies are rejected, a mixed stress keeps both rules. What happens
 * when an owner gives up or fails is {@link RWLockGivingUpContract}. Extend it with a {@link #backend()}.
 *
 * <p>"No key left behind" is asserted precisely: the keys on the name are exactly the current holders' keys.
 */
public abstract class RWLockContract extends ContractSupport {

    private RWLockService open(String name) {
        return owner(10).newRWLock(name);
    }

    private static void assertStillQueued(CompletableFuture<RWGrant> f) {
        assertStillWaiting(f, "must still be waiting");
    }

    /**
     * {@code f}, recording {@code name} in {@code order} when it is granted: the returned stage completes after the
     * record, so a test that waits for it sees the record (a dependant of {@code f} itself may run after {@code f.get()}
     * returned).
     */
    private static CompletableFuture<RWGrant> track(CompletableFuture<RWGrant> f, String name, List<String> order) {
        return f.thenApply(g -> {
            order.add(name);
            return g;
        });
    }

    // ---------------------------------------------------------------- readers share, writers wait

    @Test
    void threeReadersHoldAtOnceAndAWriterWaitsForAllOfThem() throws Exception {
        String name = uniqueName("rw-readers");
        RWLockService r1 = open(name);
        RWLockService r2 = open(name);
        RWLockService r3 = open(name);
        RWLockService w = open(name);

        RWGrant g1 = r1.rLock(Duration.ofSeconds(5));
        RWGrant g2 = r2.rLock(Duration.ofSeconds(5));
        RWGrant g3 = r3.rLock(Duration.ofSeconds(5));
        for (RWGrant g : List.of(g1, g2, g3)) {
            assertEquals(Mode.READ, g.mode());
        }
        assertKeys(name, g1.key(), g2.key(), g3.key());

        List<String> readers = keys(name);
        CompletableFuture<RWGrant> writing = w.lockAsync();
        String writerKey = awaitNewKey(name, readers);
        r1.rUnlock();
        assertStillQueued(writing);
        r2.rUnlock();
        assertStillQueued(writing);
        r3.rUnlock();
        RWGrant gw = writing.get(5, SECONDS);
        assertEquals(Mode.WRITE, gw.mode());
        assertEquals(writerKey, gw.key());
        for (RWGrant g : List.of(g1, g2, g3)) {
            assertTrue(gw.token().isNewerThan(g.token()), "writer " + gw.token() + " vs reader " + g.token());
        }
        assertKeys(name, gw.key());
        w.unlock();
        assertKeys(name);
    }

    @Test
    void readersArrivingWhileAWriterWaitsQueueBehindIt() throws Exception {
        String name = uniqueName("rw-fair");
        RWLockService r1 = open(name);
        RWLockService w1 = open(name);
        RWLockService r2 = open(name);
        RWLockService w2 = open(name);
        RWLockService r3 = open(name);
        List<String> order = Collections.synchronizedList(new ArrayList<>());

        RWGrant gr1 = r1.rLock(Duration.ofSeconds(5));
        // Registration order r1 < w1 < r2 < w2 < r3 (each key is there before the next asks).
        CompletableFuture<RWGrant> fw1 = track(w1.lockAsync(), "w1", order);
        awaitKeyCount(name, 2);
        CompletableFuture<RWGrant> fr2 = track(r2.rLockAsync(), "r2", order);
        awaitKeyCount(name, 3);
        CompletableFuture<RWGrant> fw2 = track(w2.lockAsync(), "w2", order);
        awaitKeyCount(name, 4);
        CompletableFuture<RWGrant> fr3 = track(r3.rLockAsync(), "r3", order);
        awaitKeyCount(name, 5);

        // r2 is a reader and r1 reads, but a writer asked in between: r2 does not join r1.
        assertStillQueued(fr2);
        assertFalse(fw1.isDone());
        r1.rUnlock();
        RWGrant gw1 = fw1.get(5, SECONDS);
        assertStillQueued(fr2);
        w1.unlock();
        RWGrant gr2 = fr2.get(5, SECONDS);
        assertStillQueued(fr3); // r3 queues behind w2, although a reader holds
        assertFalse(fw2.isDone());
        r2.rUnlock();
        RWGrant gw2 = fw2.get(5, SECONDS);
        assertStillQueued(fr3);
        w2.unlock();
        RWGrant gr3 = fr3.get(5, SECONDS);

        assertEquals(List.of("w1", "r2", "w2", "r3"), order);
        List<RWGrant> inOrder = List.of(gr1, gw1, gr2, gw2, gr3);
        for (int i = 1; i < inOrder.size(); i++) {
            assertTrue(inOrder.get(i).token().isNewerThan(inOrder.get(i - 1).token()), "tokens " + inOrder);
        }
        r3.rUnlock();
        assertKeys(name);
    }

    // ---------------------------------------------------------------- tokens

    @Test
    void readersOfAPhaseShareOneTokenStrictlyBetweenTheWritersAndOneGuardServesAll() throws Exception {
        String name = uniqueName("rw-tokens");
        Guard guard = Guard.create();
        RWLockService a1 = open(name);
        RWLockService a2 = open(name);
        RWLockService a3 = open(name);
        RWLockService w1 = open(name);
        RWLockService b1 = open(name);
        RWLockService b2 = open(name);
        RWLockService w2 = open(name);
        RWLockService c1 = open(name);
        RWLockService c2 = open(name);
        RWLockService w3 = open(name);

        // Phase A: three readers; w1 queues; b1 and b2 arrive behind w1.
        RWGrant ga1 = a1.rLock(Duration.ofSeconds(5));
        RWGrant ga2 = a2.rLock(Duration.ofSeconds(5));
        CompletableFuture<RWGrant> fw1 = w1.lockAsync();
        awaitKeyCount(name, 3);
        CompletableFuture<RWGrant> fb1 = b1.rLockAsync();
        awaitKeyCount(name, 4);
        // a3 asks after w1 too: it belongs to phase B, not A.
        CompletableFuture<RWGrant> fa3 = a3.rLockAsync();
        awaitKeyCount(name, 5);
        CompletableFuture<RWGrant> fb2 = b2.rLockAsync();
        awaitKeyCount(name, 6);
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
        awaitKeyCount(name, 4);
        CompletableFuture<RWGrant> fc1 = c1.rLockAsync();
        awaitKeyCount(name, 5);
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
        assertTrue(
                gw1.token().isNewerThan(a) && b.isNewerThan(gw1.token()),
                "A " + a + " < W1 " + gw1.token() + " < B " + b);
        assertTrue(
                gw2.token().isNewerThan(b) && c.isNewerThan(gw2.token()),
                "B " + b + " < W2 " + gw2.token() + " < C " + c);
        assertTrue(gw3.token().isNewerThan(c), "C " + c + " < W3 " + gw3.token());
        assertEquals(Optional.of(gw3.token()), guard.highWater());
        // And the same guard rejects every earlier owner.
        for (FencingToken stale : List.of(a, gw1.token(), b, gw2.token(), c)) {
            assertThrows(TokenStaleException.class, () -> guard.check(stale));
        }
        assertKeys(name);
    }

    @Test
    void zombieWriterAndZombieReaderAreRejectedByTheGuard() throws Exception {
        String name = uniqueName("rw-zombie");
        Guard guard = Guard.create();
        DiscoBackend.Owner zs = owner(2);
        DiscoBackend.Owner s2 = owner(2);
        RWLockService zombieWriter = zs.newRWLock(name);
        RWLockService r1 = open(name);
        RWLockService r2 = s2.newRWLock(name);
        RWLockService w = open(name);

        RWGrant gz = zombieWriter.lock(Duration.ofSeconds(5));
        guard.check(gz.token()); // writes while it legitimately holds
        backend().freeze(zs); // freezes: its lease expires after 2 s

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
        backend().freeze(s2);
        r1.rUnlock();
        RWGrant gw = w.lock(Duration.ofSeconds(10));
        guard.check(gw.token());
        assertThrows(TokenStaleException.class, () -> guard.check(g2.token()), "the frozen reader's phase has ended");
        assertThrows(TokenStaleException.class, () -> guard.check(g1.token()), "so has the released reader's");
        r2.done().toCompletableFuture().get(5, SECONDS);
        assertInstanceOf(RWLockLostException.class, r2.err().orElseThrow());
        w.unlock();
        assertKeys(name);
    }

    // ---------------------------------------------------------------- stress

    @Test
    void mixedStressWritersAreAloneAndReadersShare() throws Exception {
        String name = uniqueName("rw-stress");
        int readers = 4;
        int writers = 2;
        int rounds = 20;
        Object room = new Object();
        int[] inside = new int[2]; // [readers, writers], guarded by room
        int[] maxReaders = new int[1];
        AtomicReference<String> violation = new AtomicReference<>();
        List<RWGrant> entries = new ArrayList<>(); // in the order the owners entered, guarded by room
        Guard guard = Guard.create(); // every owner uses it while inside: none may be rejected
        List<RWLockService> services = new ArrayList<>();
        for (int i = 0; i < readers + writers; i++) {
            services.add(open(name));
        }
        ExecutorService pool = Executors.newFixedThreadPool(readers + writers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < readers + writers; i++) {
                boolean writer = i >= readers;
                RWLockService rw = services.get(i);
                futures.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        RWGrant g = writer ? rw.lock(Duration.ofSeconds(30)) : rw.rLock(Duration.ofSeconds(30));
                        synchronized (room) {
                            inside[writer ? 1 : 0]++;
                            if (inside[1] > 1 || (inside[1] == 1 && inside[0] > 0)) {
                                violation.compareAndSet(
                                        null, "inside together: " + inside[0] + " readers, " + inside[1] + " writers");
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
                    rw.close();
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
        assertKeys(name);
    }

    /**
     * In use order: a writer's token is above every earlier token; the readers between two writers share one
     * token, above the previous writer's (and so, by the first rule, below the next one's).
     */
    private static void assertTokenRule(List<RWGrant> inUseOrder) {
        long max = 0;
        long lastWriter = 0;
        long phase = 0; // the current read phase's token, 0 before its first reader
        for (int i = 0; i < inUseOrder.size(); i++) {
            RWGrant g = inUseOrder.get(i);
            long t = g.token().value();
            if (g.mode() == Mode.WRITE) {
                assertTrue(
                        t > max, "writer #" + i + " token " + t + " not above every earlier token (max " + max + ")");
                lastWriter = t;
                phase = 0;
            } else if (phase == 0) {
                assertTrue(
                        t > lastWriter,
                        "reader #" + i + " token " + t + " not above the previous writer's " + lastWriter);
                phase = t;
            } else {
                assertEquals(phase, t, "reader #" + i + " is in the read phase of token " + phase);
            }
            max = Math.max(max, t);
        }
    }
}
