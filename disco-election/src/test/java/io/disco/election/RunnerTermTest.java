package io.disco.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A runner's term on its own, without a backend: the order in which its end reaches the task (the
 * end recorded, the task's thread interrupted, then {@code ended()} completed) and its task's states.
 */
class RunnerTermTest {

    private static RunnerTerm term() {
        return new RunnerTerm(new Leadership("/e/1", "a", FencingToken.of(7)));
    }

    /** Runs {@code body} as the term's task on a thread of its own, between enter() and leave(). */
    private static Thread task(
            RunnerTerm term, CountDownLatch entered, ThrowingRunnable body, AtomicReference<Object> result) {
        Thread t = new Thread(
                () -> {
                    term.enter();
                    entered.countDown();
                    Throwable failure = null;
                    try {
                        body.run();
                    } catch (Throwable e) {
                        failure = e;
                    }
                    result.set(term.leave(failure));
                },
                "term-task");
        term.task = t;
        t.setDaemon(true);
        return t;
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void anEndWhileTheTaskRunsInterruptsItsThreadBeforeEndedCompletes() throws Exception {
        RunnerTerm term = term();
        CountDownLatch entered = new CountDownLatch(1);
        AtomicBoolean release = new AtomicBoolean();
        AtomicReference<Object> result = new AtomicReference<>();
        // a task that does not look at its interrupt: the flag stays set where the end finds it
        Thread t = task(
                term,
                entered,
                () -> {
                    while (!release.get()) {
                        Thread.onSpinWait();
                    }
                },
                result);
        t.start();
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        AtomicReference<String> atEnd = new AtomicReference<>();
        term.ended()
                .thenAccept(end -> atEnd.set(end + " active " + term.isActive() + " interrupted " + t.isInterrupted()));
        assertTrue(term.stop(LeaderTerm.End.LOST));
        assertEquals("LOST active false interrupted true", atEnd.get());
        assertFalse(term.stop(LeaderTerm.End.CLOSED), "the first end wins");
        release.set(true);
        t.join(10_000);
        assertEquals(Boolean.FALSE, result.get(), "the task's return did not end the term");
        assertEquals(Optional.of(LeaderTerm.End.LOST), term.end());
    }

    @Test
    void aTaskBlockedInAwaitEndGetsInterruptedExceptionAtTheEnd() throws Exception {
        for (LeaderTerm.End end :
                new LeaderTerm.End[] {LeaderTerm.End.LOST, LeaderTerm.End.RELINQUISHED, LeaderTerm.End.CLOSED}) {
            RunnerTerm term = term();
            CountDownLatch entered = new CountDownLatch(1);
            CompletableFuture<String> how = new CompletableFuture<>();
            Thread t = task(
                    term,
                    entered,
                    () -> {
                        try {
                            how.complete("returned " + term.awaitEnd(Duration.ofSeconds(30)));
                        } catch (InterruptedException e) {
                            how.complete("interrupted, end " + term.end().orElseThrow());
                        }
                    },
                    new AtomicReference<>());
            t.start();
            assertTrue(entered.await(10, TimeUnit.SECONDS));
            // whether the task is already in awaitEnd or not yet: its flag is set before the end completes
            term.stop(end);
            assertEquals("interrupted, end " + end, how.get(10, TimeUnit.SECONDS));
            t.join(10_000);
        }
    }

    @Test
    void aTermThatEndedBeforeItsTaskStartedStartsTheTaskInterrupted() throws Exception {
        RunnerTerm term = term();
        assertTrue(term.stop(LeaderTerm.End.CLOSED));
        CountDownLatch entered = new CountDownLatch(1);
        CompletableFuture<Boolean> interruptedAtStart = new CompletableFuture<>();
        Thread t = task(
                term,
                entered,
                () -> interruptedAtStart.complete(Thread.currentThread().isInterrupted()),
                new AtomicReference<>());
        t.start();
        assertTrue(interruptedAtStart.get(10, TimeUnit.SECONDS));
        t.join(10_000);
        assertEquals(Optional.of(LeaderTerm.End.CLOSED), term.end());
    }

    @Test
    void awaitEndThrowsWhenTheFlagIsSetEvenAfterTheEndAndReturnsOnceItIsCleared() throws Exception {
        RunnerTerm term = term();
        term.stop(LeaderTerm.End.RELINQUISHED);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> term.awaitEnd(Duration.ofSeconds(1)));
        assertFalse(Thread.currentThread().isInterrupted(), "the flag is cleared, as by every blocking call");
        assertTrue(term.awaitEnd(Duration.ofSeconds(1)));
        assertThrows(NullPointerException.class, () -> term.awaitEnd(null));
    }

    @Test
    void theTasksReturnEndsTheTermWithoutAnInterruptAndAThrowRecordsTheFailure() throws Exception {
        RunnerTerm completed = term();
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = task(completed, new CountDownLatch(1), () -> {}, result);
        t.start();
        t.join(10_000);
        assertEquals(Boolean.TRUE, result.get());
        assertEquals(
                LeaderTerm.End.COMPLETED,
                completed.ended().toCompletableFuture().get(1, TimeUnit.SECONDS));
        assertFalse(completed.stop(LeaderTerm.End.LOST), "ended by the return; nothing is sent after it");

        RunnerTerm failed = term();
        IllegalStateException boom = new IllegalStateException("boom");
        Thread f = task(
                failed,
                new CountDownLatch(1),
                () -> {
                    throw boom;
                },
                result);
        f.start();
        f.join(10_000);
        assertEquals(Optional.of(LeaderTerm.End.FAILED), failed.end());
        assertSame(boom, failed.failure);
    }

    @Test
    void theTasksStatesMoveForwardOnly() {
        RunnerTerm term = term();
        assertThrows(IllegalStateException.class, () -> term.leave(null), "leave before enter");
        term.enter();
        assertThrows(IllegalStateException.class, term::enter, "enter twice");
        assertTrue(term.leave(null));
        assertThrows(IllegalStateException.class, () -> term.leave(null), "leave twice");
    }
}
