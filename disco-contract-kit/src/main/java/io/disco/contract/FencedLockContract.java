package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.FencedLocks;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The {@link FencedLock} view over a backend's {@link LockService}: threads of one owner and of another owner
 * exclude each other with strictly increasing tokens, the hold is the thread's, and interruption and timeouts
 * withdraw the claim. Extend it with a {@link #backend()}.
 */
public abstract class FencedLockContract extends ContractSupport {

    @Test
    void threadsOfTwoOwnersExcludeEachOtherWithStrictlyIncreasingTokens() throws Exception {
        String name = uniqueName("fenced-lock");
        AtomicLong occupant = new AtomicLong(); // the token inside the critical section, 0 when empty
        List<Long> entries = new CopyOnWriteArrayList<>();
        List<String> violations = new CopyOnWriteArrayList<>();
        FencedLock mine = FencedLocks.of(owner(10).newLock(name));
        FencedLock theirs = FencedLocks.of(owner(10).newLock(name)); // another owner: as another process
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try {
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                FencedLock view = t < 4 ? mine : theirs;
                int rounds = t < 4 ? 10 : 8;
                workers.add(CompletableFuture.runAsync(
                        () -> {
                            for (int i = 0; i < rounds; i++) {
                                view.lock();
                                try {
                                    long token = view.token().value();
                                    if (!occupant.compareAndSet(0, token)) {
                                        violations.add(token + " entered while " + occupant.get() + " was inside");
                                    }
                                    entries.add(token);
                                    view.lock(); // reentrant: same hold, same token
                                    assertEquals(2, view.getHoldCount());
                                    assertEquals(token, view.token().value());
                                    view.unlock();
                                    if (!occupant.compareAndSet(token, 0)) {
                                        violations.add(token + " left while " + occupant.get() + " was inside");
                                    }
                                } finally {
                                    view.unlock();
                                }
                            }
                        },
                        threads));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        } finally {
            threads.shutdownNow();
        }
        assertEquals(List.of(), violations);
        assertEquals(4 * 10 + 2 * 8, entries.size());
        for (int i = 1; i < entries.size(); i++) {
            assertTrue(entries.get(i) > entries.get(i - 1), "tokens strictly increase across owners: " + entries);
        }
        assertKeys(name);
    }

    @Test
    void aThreadThatDoesNotHoldItCannotUnlockOrReadTheToken() throws Exception {
        String name = uniqueName("fenced-lock-owner");
        FencedLock view = FencedLocks.of(owner(10).newLock(name));
        assertThrows(IllegalMonitorStateException.class, view::unlock, "nobody holds it");
        view.lock();
        CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        view.unlock();
                        return null;
                    } catch (Throwable t) {
                        return t;
                    }
                },
                THREADS);
        assertInstanceOf(IllegalMonitorStateException.class, other.get(10, TimeUnit.SECONDS));
        assertTrue(CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                view.token();
                                return false;
                            } catch (IllegalMonitorStateException e) {
                                return true;
                            }
                        },
                        THREADS)
                .get(10, TimeUnit.SECONDS));
        assertTrue(view.isHeldByCurrentThread());
        assertThrows(UnsupportedOperationException.class, view::newCondition);
        view.unlock();
        assertKeys(name);
    }

    @Test
    void interruptionAndTimeoutsWithdrawTheClaim() throws Exception {
        String name = uniqueName("fenced-lock-withdraw");
        LockService holder = owner(10).newLock(name);
        FencedLock view = FencedLocks.of(owner(10).newLock(name));
        String held = holder.lock(Duration.ofSeconds(10)).key();
        assertFalse(view.tryLock());
        assertFalse(view.tryLock(300, TimeUnit.MILLISECONDS));
        assertKeys(name, held); // the timed-out claim was withdrawn

        CompletableFuture<Throwable> waiting = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                view.lockInterruptibly();
                waiting.complete(null);
            } catch (Throwable e) {
                waiting.complete(e);
            }
        });
        t.start();
        awaitKeyCount(name, 2);
        t.interrupt();
        assertInstanceOf(InterruptedException.class, waiting.get(10, TimeUnit.SECONDS));
        awaitKeys(name, List.of(held));
        assertFalse(view.isHeldByCurrentThread());

        holder.unlock();
        assertTrue(view.tryLock(10, TimeUnit.SECONDS), "free again: the view takes it");
        view.unlock();
    }
}
