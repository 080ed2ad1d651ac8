package io.disco.contract;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.fencing.Held;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWGrant.Mode;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The {@link RWLockService} contract when an owner gives up or fails (the other half of
 * {@link RWLockContract}, which covers sharing, order, tokens and zombies): every way of giving up
 * leaves only the holders' keys, a waiter whose lease ends never wins, compaction while waiting is not
 * a failure, releasing the mode not held changes nothing, bad input, close, scoped and asynchronous
 * releases. Extend it with a {@link #backend()}.
 *
 * <p>"No key left behind" is asserted precisely: the keys on the name are exactly the current holders' keys.
 */
public abstract class RWLockGivingUpContract extends ContractSupport {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private RWLockService open(String name) {
        return owner(10).newRWLock(name);
    }

    private static void assertStillQueued(CompletableFuture<RWGrant> f) {
        assertStillWaiting(f, "must still be waiting");
    }

    // ---------------------------------------------------------------- giving up

    @Test
    void givingUpLeavesOnlyTheHoldersKeys() throws Exception {
        String name = uniqueName("rw-giveup");
        RWLockService holder = open(name);
        RWLockService other = open(name);
        RWLockService waitingWriter = open(name);

        // A writer holds: both modes are blocked.
        RWGrant held = holder.lock();
        giveUpEveryWay(name, other, Mode.READ, held.key());
        giveUpEveryWay(name, other, Mode.WRITE, held.key());
        holder.unlock();

        // A reader holds: a writer is blocked, a reader is not...
        RWGrant read = holder.rLock();
        RWGrant shared = other.tryRLock().orElseThrow();
        assertEquals(read.token(), shared.token());
        other.rUnlock();
        giveUpEveryWay(name, other, Mode.WRITE, read.key());
        // ...unless a writer waits: then a reader is blocked too.
        CompletableFuture<RWGrant> writing = waitingWriter.lockAsync();
        String writerKey = awaitNewKey(name, List.of(read.key()));
        giveUpEveryWay(name, other, Mode.READ, read.key(), writerKey);
        holder.rUnlock();
        RWGrant gw = writing.get(5, SECONDS);
        waitingWriter.unlock();

        // After all that, the other owner still gets in once the lock is free.
        RWGrant g = other.lock(Duration.ofSeconds(5));
        assertTrue(g.token().isNewerThan(gw.token()));
        other.unlock();
        assertKeys(name);
    }

    /** tryX is empty, X(timeout) times out, an interrupted X and a cancelled XAsync: each leaves only {@code holders}. */
    private void giveUpEveryWay(String name, RWLockService other, Mode mode, String... holders) throws Exception {
        List<String> holderKeys = new ArrayList<>(List.of(holders));
        Collections.sort(holderKeys);

        assertTrue(
                (mode == Mode.READ ? other.tryRLock() : other.tryLock()).isEmpty(),
                mode + ": try must be empty when blocked");
        assertKeys(name, holders);

        assertThrows(TimeoutException.class, () -> {
            if (mode == Mode.READ) {
                other.rLock(Duration.ofMillis(500));
            } else {
                other.lock(Duration.ofMillis(500));
            }
        });
        assertKeys(name, holders);

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
        awaitNewKey(name, holderKeys);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, interrupted.get(5, SECONDS));
        assertKeys(name, holders);

        CompletableFuture<RWGrant> async = mode == Mode.READ ? other.rLockAsync() : other.lockAsync();
        awaitNewKey(name, holderKeys);
        assertTrue(async.cancel(true));
        assertThrows(CancellationException.class, async::join);
        awaitKeys(name, holderKeys);
        assertTrue(other.held().isEmpty());
    }

    @Test
    void aWaiterWhoseLeaseIsRevokedFailsAndNeverAcquires() throws Exception {
        for (Mode mode : Mode.values()) {
            String name = uniqueName("rw-revoked");
            RWLockService holder = open(name);
            DiscoBackend.Owner waiterOwner = owner(30);
            // The holder holds the other mode, so the waiter is blocked either way.
            RWGrant held = mode == Mode.READ ? holder.lock() : holder.rLock();
            RWLockService waiter = waiterOwner.newRWLock(name);
            CompletableFuture<RWGrant> waiting = mode == Mode.READ ? waiter.rLockAsync() : waiter.lockAsync();
            awaitNewKey(name, List.of(held.key()));

            backend().endOwner(waiterOwner);

            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(3, SECONDS));
            assertInstanceOf(RWLockLostException.class, e.getCause(), mode + " waiter");
            assertKeys(name, held.key());
            waiter.done().toCompletableFuture().get(5, SECONDS);
            assertTrue(waiter.err().isPresent());
            if (mode == Mode.READ) {
                holder.unlock();
            } else {
                holder.rUnlock();
            }
            assertTrue(waiter.held().isEmpty(), "the revoked waiter must never report a grant");
            assertKeys(name);
        }
    }

    @Test
    void historyCompactedWhileWaitingIsNotAFailure() throws Exception {
        for (Mode mode : Mode.values()) {
            String name = uniqueName("rw-compact");
            RWLockService holder = open(name);
            RWLockService waiter = open(name);
            RWGrant held = mode == Mode.READ ? holder.lock() : holder.rLock();
            CompletableFuture<RWGrant> waiting = mode == Mode.READ ? waiter.rLockAsync() : waiter.lockAsync();
            awaitKeyCount(name, 2);
            RWLockService noise = open(uniqueName("rw-compact-noise"));
            for (int i = 0; i < 5; i++) {
                noise.lock();
                noise.unlock();
            }
            backend().compactHistory();
            assertStillQueued(waiting);
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

    // ---------------------------------------------------------------- misuse, bad input, close

    @Test
    void releasingTheModeNotHeldFailsAndReleasesNothing() throws Exception {
        String name = uniqueName("rw-mode");
        RWLockService rw = open(name);
        RWLockService other = open(name);

        RWGrant w = rw.lock();
        IllegalStateException e = assertThrows(IllegalStateException.class, rw::rUnlock);
        assertTrue(e.getMessage().contains("rUnlock"), e.getMessage());
        assertEquals(Optional.of(w), rw.held());
        assertKeys(name, w.key());
        assertTrue(other.tryRLock().isEmpty(), "the write grant is still held");
        assertThrows(IllegalStateException.class, rw::rLock, "no downgrade");
        assertThrows(IllegalStateException.class, rw::tryRLock, "no downgrade");
        assertEquals(w, rw.lock(), "lock() while holding the write grant returns it");
        rw.unlock();
        assertKeys(name);

        RWGrant r = rw.rLock();
        e = assertThrows(IllegalStateException.class, rw::unlock);
        assertTrue(e.getMessage().contains("unlock"), e.getMessage());
        assertEquals(Optional.of(r), rw.held());
        assertKeys(name, r.key());
        assertTrue(other.tryLock().isEmpty(), "the read grant is still held");
        assertThrows(IllegalStateException.class, rw::lock, "no upgrade");
        assertThrows(IllegalStateException.class, rw::lockAsync, "no upgrade");
        assertEquals(r, rw.rLock(), "rLock() while holding a read grant returns it");
        rw.rUnlock();
        assertKeys(name);
        assertTrue(other.tryLock().isPresent());
        rw.rUnlock(); // holding nothing: a no-op
        rw.unlock();
    }

    @Test
    void badInputFailsAtOnceAndChangesNothing() throws Exception {
        String name = uniqueName("rw-input");
        DiscoBackend.Owner owner = owner(5);
        assertThrows(NullPointerException.class, () -> owner.newRWLock(null));
        assertThrows(IllegalArgumentException.class, () -> owner.newRWLock(" "));
        RWLockService first = owner.newRWLock(name);
        IllegalStateException dup = assertThrows(IllegalStateException.class, () -> owner.newRWLock(name));
        assertTrue(dup.getMessage().contains(name), dup.getMessage());
        assertThrows(IllegalStateException.class, () -> owner.newLock(name), "one service per name and owner");
        assertThrows(NullPointerException.class, () -> first.rLock((Duration) null));
        assertThrows(NullPointerException.class, () -> first.lock((Duration) null));
        // A timeout of zero or less is no bad input: one try, at once (UniformRulesContract).
        first.close();
        assertThrows(IllegalStateException.class, first::tryRLock, "closed");
        owner.newRWLock(name).close();
        assertKeys(name);
    }

    @Test
    void closeReleasesPromptlyAndASharedOwnerStaysOpen() throws Exception {
        String name = uniqueName("rw-close");
        RWLockService a = owner(30).newRWLock(name);
        RWLockService c = owner(30).newRWLock(name);
        DiscoBackend.Owner shared = owner(30);
        RWGrant ga = a.rLock();
        CompletableFuture<RWGrant> waiting = c.lockAsync();
        awaitKeyCount(name, 2);
        a.close();
        RWGrant gc = waiting.get(3, SECONDS); // far sooner than a's 30 s TTL: close() released
        assertTrue(gc.token().isNewerThan(ga.token()));
        a.done().toCompletableFuture().get(1, SECONDS);
        assertTrue(a.err().isEmpty(), "a plain close is not a loss");
        c.unlock();

        RWLockService b = shared.newRWLock(name);
        b.lock();
        b.close();
        assertKeys(name);
        assertFalse(shared.done().toCompletableFuture().isDone(), "a shared owner stays open");
    }

    // ---------------------------------------------------------------- scoped and asynchronous release

    @Test
    void scopedReadAndWriteHolds() throws Exception {
        String name = uniqueName("scoped-rw");
        RWLockService rw = open(name);
        long read;
        try (Held<RWGrant> r = rw.holdRead(WAIT)) {
            read = r.token().value();
            assertEquals(Mode.READ, r.grant().mode());
        }
        try (Held<RWGrant> w = rw.holdWrite(WAIT)) {
            assertEquals(Mode.WRITE, w.grant().mode());
            assertTrue(w.token().value() > read);
        }
        assertTrue(rw.held().isEmpty());
        assertKeys(name);
    }

    @Test
    void asynchronousReleasesCompleteOffTheBackendThreads() throws Exception {
        String name = uniqueName("async-rw");
        RWLockService rw = open(name);
        rw.rLock(WAIT);
        assertCompletesOffBackendThreads(rw.rUnlockAsync());
        rw.lock(WAIT);
        ExecutionException wrongMode =
                assertThrows(ExecutionException.class, () -> rw.rUnlockAsync().get(10, SECONDS));
        assertInstanceOf(IllegalStateException.class, wrongMode.getCause());
        assertCompletesOffBackendThreads(rw.unlockAsync());
        assertKeys(name);
    }
}
