package io.disco.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.LockService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The thread-owned lock while there is nothing to claim through (the client has no owner): nothing is held. */
class QueuedFencedLockTest {

    private final QueuedFencedLock lock = new QueuedFencedLock(CompletableFuture<LockService>::new, "lock '/x'");

    @Test
    void aTryWithoutAServiceIsNotFreeNow() {
        assertFalse(lock.tryLock());
        assertFalse(lock.isHeldByCurrentThread());
        assertEquals(0, lock.getHoldCount());
    }

    @Test
    void aTimedTryWithoutAServiceReturnsFalseAtItsTimeout() throws Exception {
        long start = System.nanoTime();
        assertFalse(lock.tryLock(100, TimeUnit.MILLISECONDS));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(90));
        assertFalse(lock.withMaxHold(Duration.ofSeconds(1)).tryLock(10, TimeUnit.MILLISECONDS));
        assertFalse(lock.isHeldByCurrentThread());
    }

    @Test
    void theMaximumHoldTimeIsChecked() {
        assertThrows(NullPointerException.class, () -> lock.withMaxHold(null));
        assertThrows(IllegalArgumentException.class, () -> lock.withMaxHold(Duration.ZERO));
        assertThrows(NullPointerException.class, () -> FencedLocks.of(null));
    }
}
