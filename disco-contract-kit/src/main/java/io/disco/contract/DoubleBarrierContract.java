package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.BarrierLostException;
import io.disco.barrier.DoubleBarrier;
import io.disco.barrier.DoubleBarrier.State;
import io.disco.client.Disco;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The {@link DoubleBarrier} from the client ({@code Disco.doubleBarrier}; issue 50): nobody passes before all
 * participants entered, nobody leaves before all left; a participant that gives up (timeout, interrupt) leaves no
 * key; one that dies counts as left, and is told; one too many is refused; the handle's states; rounds; a close
 * while entering. Participants are counted by their keys ({@link io.disco.client.TestableBackend#keys}). Extend it
 * with a {@link #backend()}.
 */
public abstract class DoubleBarrierContract extends ContractSupport {

    private static CompletableFuture<Boolean> entering(DoubleBarrier p) {
        return onThread(() -> {
            p.enter();
            return true;
        });
    }

    private static CompletableFuture<Boolean> leaving(DoubleBarrier p) {
        return onThread(() -> {
            p.leave();
            return true;
        });
    }

    private static <T> T soon(CompletableFuture<T> f) throws Exception {
        return f.get(SOON.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> soon(f)).getCause();
    }

    @Test
    void nobodyPassesBeforeAllEnteredAndNobodyLeavesBeforeAllLeft() throws Exception {
        String name = uniqueName("double-barrier");
        Disco a = client(10);
        Disco b = client(10);
        DoubleBarrier p1 = a.doubleBarrier(name, 3);
        DoubleBarrier p2 = a.doubleBarrier(name, 3); // two participants of one process
        DoubleBarrier p3 = b.doubleBarrier(name, 3);
        assertEquals(State.OUTSIDE, p1.state());

        CompletableFuture<Boolean> e1 = entering(p1);
        CompletableFuture<Boolean> e2 = entering(p2);
        awaitKeyCount(name, 2);
        assertStillWaiting(e1, "a participant passed with 2 of 3 entered");
        assertFalse(e2.isDone(), "a participant passed with 2 of 3 entered");
        assertEquals(State.ENTERING, p1.state());
        assertTrue(p3.enter(SOON), "the third completes the count");
        assertTrue(soon(e1));
        assertTrue(soon(e2));
        assertEquals(State.INSIDE, p1.state());
        assertEquals(3, keys(name).size(), "every participant is inside");

        CompletableFuture<Boolean> l1 = leaving(p1);
        CompletableFuture<Boolean> l3 = leaving(p3);
        awaitKeyCount(name, 1);
        assertStillWaiting(l1, "a participant left with one still inside");
        assertFalse(l3.isDone(), "a participant left with one still inside");
        assertEquals(State.LEAVING, p1.state());
        assertTrue(p2.leave(SOON), "the last one out");
        assertTrue(soon(l1));
        assertTrue(soon(l3));
        assertEquals(List.of(), keys(name));
        assertEquals(State.OUTSIDE, p1.state());

        // a second round with the same handles
        CompletableFuture<Boolean> again1 = entering(p1);
        CompletableFuture<Boolean> again3 = entering(p3);
        assertTrue(p2.enter(SOON));
        assertTrue(soon(again1));
        assertTrue(soon(again3));
        CompletableFuture<Boolean> out1 = leaving(p1);
        CompletableFuture<Boolean> out2 = leaving(p2);
        assertTrue(p3.leave(SOON));
        assertTrue(soon(out1));
        assertTrue(soon(out2));
    }

    @Test
    void aParticipantThatGivesUpLeavesNoKey() throws Exception {
        String name = uniqueName("double-barrier-give-up");
        Disco a = client(10);
        DoubleBarrier alone = a.doubleBarrier(name, 2);
        assertFalse(alone.enter(Duration.ofMillis(300)), "nobody else came");
        assertEquals(State.OUTSIDE, alone.state());
        assertEquals(List.of(), keys(name), "a timed-out enter withdraws its key");

        CompletableFuture<Thread> thread = new CompletableFuture<>();
        CompletableFuture<Boolean> interrupted = onThread(() -> {
            thread.complete(Thread.currentThread());
            alone.enter();
            return true;
        });
        awaitKeyCount(name, 1);
        thread.join().interrupt();
        assertInstanceOf(InterruptedException.class, failure(interrupted));
        assertEquals(List.of(), keys(name), "an interrupted enter withdraws its key");
        assertEquals(State.OUTSIDE, alone.state());

        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, alone::enter, "interrupted on entry");
        assertEquals(List.of(), keys(name), "nothing registered");

        // a timed-out leave: this participant has left, the other is still inside
        DoubleBarrier other = a.doubleBarrier(name, 2);
        CompletableFuture<Boolean> in = entering(other);
        assertTrue(alone.enter(SOON));
        assertTrue(soon(in));
        assertFalse(alone.leave(Duration.ofMillis(300)), "the other is still inside");
        assertEquals(State.OUTSIDE, alone.state());
        awaitKeyCount(name, 1); // only the other's key: a leave cut short removes its own (in the background)
        assertTrue(other.leave(SOON), "nobody else is inside");
        assertEquals(List.of(), keys(name));
    }

    @Test
    void aParticipantWhoseOwnerIsLostCountsAsLeftAndIsTold() throws Exception {
        String name = uniqueName("double-barrier-lost");
        Disco a = client(10);
        Disco b = client(10);
        DoubleBarrier lost = a.doubleBarrier(name, 2);
        DoubleBarrier stays = b.doubleBarrier(name, 2);

        // lost before the barrier opened: the others wait for one more
        CompletableFuture<Boolean> waiting = entering(lost);
        String key = awaitNewKey(name, List.of());
        backend().endOwnerOf(key);
        assertInstanceOf(BarrierLostException.class, failure(waiting));
        assertEquals(State.OUTSIDE, lost.state());
        assertFalse(stays.enter(Duration.ofMillis(300)), "the lost participant is not counted");

        // lost inside: the others' leave does not wait for it
        CompletableFuture<Boolean> in = entering(stays);
        assertTrue(lost.enter(SOON), "a participant enters again, through its client's new owner");
        assertTrue(soon(in));
        String lostKey = keys(name).stream()
                .filter(k -> !k.equals(keyOf(b, name)))
                .findFirst()
                .orElseThrow();
        backend().endOwnerOf(lostKey);
        assertTrue(stays.leave(SOON), "a participant lost inside counts as left");
        assertInstanceOf(BarrierLostException.class, assertThrows(BarrierLostException.class, lost::leave));
        assertEquals(State.OUTSIDE, lost.state());
    }

    private String keyOf(Disco client, String name) {
        List<String> keys = uncheckedKeys(name);
        return keys.stream()
                .filter(k -> backend().ownerOf(k).equals(client.status().owner()))
                .findFirst()
                .orElseThrow();
    }

    private List<String> uncheckedKeys(String name) {
        try {
            return keys(name);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void oneTooManyIsRefusedAndTheStatesAreChecked() throws Exception {
        String name = uniqueName("double-barrier-too-many");
        Disco a = client(10);
        DoubleBarrier p1 = a.doubleBarrier(name, 2);
        DoubleBarrier p2 = a.doubleBarrier(name, 2);
        DoubleBarrier late = a.doubleBarrier(name, 2);
        assertThrows(IllegalStateException.class, p1::leave, "leave while outside");
        CompletableFuture<Boolean> e1 = entering(p1);
        awaitKeyCount(name, 1);
        assertThrows(IllegalStateException.class, p1::enter, "enter while entering");
        assertTrue(p2.enter(SOON));
        assertTrue(soon(e1));
        assertThrows(IllegalStateException.class, p1::enter, "enter while inside");

        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> late.enter(SOON));
        assertTrue(refused.getMessage().contains(name), refused.getMessage());
        assertEquals(State.OUTSIDE, late.state());
        assertEquals(2, keys(name).size(), "the one too many left no key");

        CompletableFuture<Boolean> l1 = leaving(p1);
        assertTrue(p2.leave(SOON));
        assertTrue(soon(l1));

        assertThrows(IllegalArgumentException.class, () -> a.doubleBarrier(name, 0));
        assertThrows(NullPointerException.class, () -> a.doubleBarrier(null, 2));
        assertThrows(IllegalArgumentException.class, () -> a.doubleBarrier("relative", 2));
    }

    @Test
    void closingTheClientEndsAnEnterAndRemovesTheKey() throws Exception {
        String name = uniqueName("double-barrier-close");
        Disco a = client(10);
        DoubleBarrier p = a.doubleBarrier(name, 2);
        CompletableFuture<Boolean> waiting = entering(p);
        awaitKeyCount(name, 1);
        a.close();
        assertInstanceOf(IllegalStateException.class, failure(waiting));
        awaitKeyCount(name, 0);
        assertThrows(IllegalStateException.class, p::enter);
    }
}
