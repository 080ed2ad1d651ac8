package io.disco.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/** Each {@link Wait} picks the matching form of a service's acquire methods, and waits for locks and futures so. */
class WaitTest {

    /** Records which form was called. */
    private final List<String> calls = new ArrayList<>();

    private String claim(Wait wait, long deadline) throws Exception {
        return wait.claim(
                deadline,
                () -> {
                    calls.add("try");
                    return Optional.empty();
                },
                () -> {
                    calls.add("blocking");
                    return "g";
                },
                (Duration d) -> {
                    calls.add("timed");
                    return "g";
                },
                () -> {
                    calls.add("async");
                    return CompletableFuture.completedFuture("g");
                });
    }

    @Test
    void eachWaitClaimsInItsForm() throws Exception {
        assertEquals("g", claim(Wait.UNINTERRUPTIBLY, 0));
        assertNull(claim(Wait.NOT_AT_ALL, 0));
        assertEquals("g", claim(Wait.INTERRUPTIBLY, Long.MAX_VALUE));
        assertEquals("g", claim(Wait.INTERRUPTIBLY, System.nanoTime() + TimeUnit.SECONDS.toNanos(5)));
        assertEquals(List.of("async", "try", "blocking", "timed"), calls);
        assertThrows(TimeoutException.class, () -> claim(Wait.INTERRUPTIBLY, System.nanoTime() - 1));
        assertEquals(4, calls.size(), "no claim once the deadline has passed");
    }

    @Test
    void anUninterruptibleClaimKeepsItsPlaceWhateverInterrupts() throws Exception {
        Thread.currentThread().interrupt();
        CompletableFuture<String> later = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() -> later.complete("g"));
        assertEquals("g", Wait.UNINTERRUPTIBLY.claim(0, Optional::empty, () -> "x", d -> "x", () -> later));
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
    }

    @Test
    void localLocksAndFuturesAreWaitedForSo() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
            lock.lock();
            return true;
        });
        assertTrue(other.get(5, TimeUnit.SECONDS));
        assertFalse(Wait.NOT_AT_ALL.lock(lock, 0));
        assertFalse(Wait.INTERRUPTIBLY.lock(lock, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50)));

        CompletableFuture<String> pending = new CompletableFuture<>();
        assertThrows(TimeoutException.class, () -> Wait.NOT_AT_ALL.await(pending, 0));
        assertThrows(TimeoutException.class, () -> Wait.INTERRUPTIBLY.await(pending, System.nanoTime() + 1_000_000));
        assertEquals("done", Wait.NOT_AT_ALL.await(CompletableFuture.completedFuture("done"), 0));
        assertThrows(
                IllegalStateException.class,
                () -> Wait.UNINTERRUPTIBLY.await(
                        CompletableFuture.failedFuture(new IllegalStateException("closed")), 0));
    }

    @Test
    void theGraceOfAFailedClaimIsBoundedByTheWait() {
        assertEquals(0, Wait.NOT_AT_ALL.maxWait(0));
        assertEquals(Long.MAX_VALUE, Wait.UNINTERRUPTIBLY.maxWait(0));
        assertEquals(Long.MAX_VALUE, Wait.INTERRUPTIBLY.maxWait(Long.MAX_VALUE));
        assertTrue(Wait.INTERRUPTIBLY.maxWait(System.nanoTime() + TimeUnit.SECONDS.toNanos(1))
                <= TimeUnit.SECONDS.toNanos(1));
    }
}
