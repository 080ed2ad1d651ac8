package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.Barrier;
import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The {@link Barrier} from the client ({@code Disco.barrier}; issue 50): a waiter returns only once the barrier is
 * lowered, by any process; hold and release say whether they changed anything; the barrier outlives the client
 * that raised it (closed, or its owner ended); a wait rides through the loss of its own client's owner; timeouts,
 * interrupts, a close while waiting, and bad input. Extend it with a {@link #backend()}.
 */
public abstract class BarrierContract extends ContractSupport {

    @Test
    void aWaiterReturnsOnlyOnceAnotherProcessLowersTheBarrier() throws Exception {
        String name = uniqueName("barrier");
        Disco a = client(10);
        Disco b = client(10);
        Barrier held = a.barrier(name);
        Barrier seen = b.barrier(name);
        assertTrue(seen.await(Duration.ZERO), "not raised yet: down");
        assertTrue(held.hold(), "raised by this call");
        assertFalse(held.hold(), "already up");
        assertFalse(seen.hold(), "up, whoever asks");
        assertTrue(seen.isHeld());

        CompletableFuture<Boolean> waiter = onThread(() -> {
            seen.await();
            return true;
        });
        assertStillWaiting(waiter, "a waiter passed a barrier that is up");
        assertFalse(seen.await(Duration.ofMillis(200)), "a timed wait on a barrier that stays up");

        assertTrue(seen.release(), "any process lowers it"); // b lowers what a raised
        assertTrue(waiter.get(SOON.toMillis(), TimeUnit.MILLISECONDS));
        assertFalse(held.release(), "already down");
        assertFalse(held.isHeld());
        assertTrue(held.await(Duration.ofSeconds(1)));
    }

    @Test
    void theBarrierOutlivesTheClientThatRaisedIt() throws Exception {
        String name = uniqueName("barrier-outlives");
        Disco a = client(10);
        Disco b = client(10);
        assertTrue(a.barrier(name).hold());
        String lockName = uniqueName("barrier-owner");
        FencedLock other = a.lock(lockName);
        other.lock(); // a key of a's owner, to end it by
        String ownerKey = keys(lockName).get(0);
        backend().endOwnerOf(ownerKey); // a's owner lost
        assertTrue(b.barrier(name).isHeld(), "the barrier belongs to no owner: it stays up when its holder's goes");
        a.close();
        Barrier seen = b.barrier(name);
        assertTrue(seen.isHeld(), "closing a client lowers nothing");
        assertFalse(seen.await(Duration.ofMillis(300)));
        assertTrue(seen.release());
        assertTrue(seen.await(Duration.ZERO));
    }

    @Test
    void aWaitGoesOnThroughTheNextOwnerWhenItsClientLosesItsOwner() throws Exception {
        String name = uniqueName("barrier-heal");
        Disco a = client(10);
        Disco b = client(10);
        assertTrue(a.barrier(name).hold());
        CompletableFuture<Boolean> waiter = onThread(() -> {
            b.barrier(name).await();
            return true;
        });
        String lockName = uniqueName("barrier-owner");
        FencedLock other = b.lock(lockName);
        other.lock(); // a key of b's owner, to end it by
        String ownerKey = keys(lockName).get(0);
        backend().endOwnerOf(ownerKey); // b's owner lost while it waits (and the lock with it)
        assertStillWaiting(waiter, "the loss of the waiter's owner lowered nothing");
        assertTrue(a.barrier(name).release());
        assertTrue(waiter.get(SOON.toMillis() * 3, TimeUnit.MILLISECONDS), "the wait went on through the next owner");
    }

    @Test
    void anInterruptedWaitThrowsAndAClosedClientEndsAWait() throws Exception {
        String name = uniqueName("barrier-interrupt");
        Disco a = client(10);
        Disco b = client(10);
        Barrier barrier = a.barrier(name);
        assertTrue(barrier.hold());

        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, barrier::await, "interrupted on entry");
        assertFalse(Thread.interrupted(), "the interrupt was taken");

        CompletableFuture<Thread> thread = new CompletableFuture<>();
        CompletableFuture<Boolean> waiter = onThread(() -> {
            thread.complete(Thread.currentThread());
            barrier.await();
            return true;
        });
        assertStillWaiting(waiter, "a waiter passed a barrier that is up");
        thread.join().interrupt();
        ExecutionException interrupted =
                assertThrows(ExecutionException.class, () -> waiter.get(SOON.toMillis(), TimeUnit.MILLISECONDS));
        assertInstanceOf(InterruptedException.class, interrupted.getCause());

        Barrier onB = b.barrier(name);
        CompletableFuture<Boolean> closed = onThread(() -> {
            onB.await();
            return true;
        });
        assertStillWaiting(closed, "a waiter passed a barrier that is up");
        b.close();
        ExecutionException ended =
                assertThrows(ExecutionException.class, () -> closed.get(SOON.toMillis(), TimeUnit.MILLISECONDS));
        assertInstanceOf(IllegalStateException.class, ended.getCause(), "a wait ended by the client's close");
        assertThrows(IllegalStateException.class, onB::hold, "a closed client");
        assertThrows(IllegalStateException.class, () -> b.barrier(name), "a closed client");
        assertTrue(barrier.isHeld(), "nothing lowered it");
        assertTrue(barrier.release());
    }

    @Test
    void badNamesAreRefusedUpFront() {
        Disco a = client(10);
        assertThrows(NullPointerException.class, () -> a.barrier(null));
        assertThrows(IllegalArgumentException.class, () -> a.barrier(" "));
        assertThrows(IllegalArgumentException.class, () -> a.barrier("no-slash"));
        assertThrows(IllegalArgumentException.class, () -> a.barrier("/trailing/"));
        assertThrows(NullPointerException.class, () -> a.barrier("/barriers/x").await(null));
        assertEquals("/barriers/x", a.barrier("/barriers/x").name());
    }
}
