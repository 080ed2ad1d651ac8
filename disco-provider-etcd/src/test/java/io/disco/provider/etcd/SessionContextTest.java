package io.disco.provider.etcd;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.internal.SessionThread;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The session's serial context ({@link SessionContext}) on its own: no etcd needed. */
class SessionContextTest {

    private final ScheduledThreadPoolExecutor worker = SessionThread.newExecutor("disco-session-test");
    private final SessionContext context = new SessionContext(worker, "test");

    @AfterEach
    void stop() {
        worker.shutdownNow();
    }

    @Test
    void anIdleContextRunsATaskAtOnceOnTheCallersThreadMarkedAsASessionThread() {
        List<Thread> ran = new ArrayList<>();
        List<Boolean> marked = new ArrayList<>();
        context.runHere(() -> {
            ran.add(Thread.currentThread());
            marked.add(SessionThread.onSessionThread());
        });
        assertEquals(List.of(Thread.currentThread()), ran);
        assertEquals(List.of(true), marked, "while it works for the session, the thread counts as a session thread");
        assertFalse(SessionThread.onSessionThread(), "and no longer afterwards");
    }

    @Test
    void aTaskSubmittedWhileATaskRunsRunsAfterItNotInsideIt() {
        List<String> order = new CopyOnWriteArrayList<>();
        context.runHere(() -> {
            context.runHere(() -> order.add("inner"));
            order.add("outer done");
        });
        assertEquals(List.of("outer done", "inner"), order);
    }

    @Test
    void tasksFromManyThreadsNeverOverlapAndKeepEachSubmittersOrder() throws Exception {
        int threads = 8;
        int perThread = 2_000;
        AtomicInteger running = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        int[] last = new int[threads]; // written only inside the context
        AtomicInteger outOfOrder = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> submitters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                awaitQuietly(start);
                for (int i = 1; i <= perThread; i++) {
                    int seq = i;
                    Runnable task = () -> {
                        if (running.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (last[id] != seq - 1) {
                            outOfOrder.incrementAndGet();
                        }
                        last[id] = seq;
                        running.decrementAndGet();
                        done.incrementAndGet();
                    };
                    if (seq % 3 == 0) {
                        context.execute(task);
                    } else {
                        context.runHere(task);
                    }
                }
            });
            th.start();
            submitters.add(th);
        }
        start.countDown();
        for (Thread th : submitters) {
            th.join(SECONDS.toMillis(30));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> done.get() == threads * perThread);
        assertEquals(0, overlaps.get(), "tasks ran at the same time");
        assertEquals(0, outOfOrder.get(), "a submitter's tasks ran out of order");
    }

    @Test
    void aBorrowedThreadHandsTheRestToTheWorkerAfterABatch() throws Exception {
        List<Thread> ran = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> last = new CompletableFuture<>();
        context.runHere(() -> {
            for (int i = 0; i < 3 * SessionContext.BATCH; i++) {
                context.execute(() -> ran.add(Thread.currentThread()));
            }
            context.execute(() -> last.complete(null));
        });
        last.get(10, SECONDS);
        long here = ran.stream().filter(t -> t == Thread.currentThread()).count();
        assertEquals(SessionContext.BATCH - 1, here, "the caller ran one batch (its own task included), no more");
        assertTrue(
                ran.stream().skip(here).allMatch(t -> t.getName().equals("disco-session-test")),
                "the worker ran the rest");
    }

    @Test
    void anIoEventLoopIsNeverBorrowed() throws Exception {
        CompletableFuture<Thread> ran = new CompletableFuture<>();
        Thread eventLoop = new io.netty.util.concurrent.FastThreadLocalThread(
                () -> context.runHere(() -> ran.complete(Thread.currentThread())), "vert.x-eventloop-thread-test");
        eventLoop.start();
        assertEquals(
                "disco-session-test", ran.get(10, SECONDS).getName(), "the worker runs what an event loop hands over");
    }

    @Test
    void aCallerWaitingForAnAnswerRunsTheTaskThatBringsIt() throws Exception {
        CompletableFuture<Thread> answer = new CompletableFuture<>();
        CompletableFuture<Thread> waiter = new CompletableFuture<>();
        Thread caller = new Thread(
                () -> {
                    try {
                        waiter.complete(Thread.currentThread());
                        context.await(answer, SECONDS.toNanos(10));
                    } catch (Exception e) {
                        waiter.completeExceptionally(e);
                    }
                },
                "caller");
        caller.start();
        await().atMost(Duration.ofSeconds(5))
                .until(() ->
                        caller.getState() == Thread.State.WAITING || caller.getState() == Thread.State.TIMED_WAITING);
        // as jetcd hands over an answer: from an event loop, which is never lent
        Thread eventLoop = new io.netty.util.concurrent.FastThreadLocalThread(
                () -> context.runHere(() -> answer.complete(Thread.currentThread())), "vert.x-eventloop-thread-test");
        eventLoop.start();
        assertSame(caller, answer.get(10, SECONDS), "the waiting caller ran the task, not the worker");
        caller.join(5_000);
    }

    @Test
    void aWaitThatTimesOutOrIsInterruptedLeavesTheContextToOthers() throws Exception {
        CompletableFuture<Void> never = new CompletableFuture<>();
        assertThrows(TimeoutException.class, () -> context.await(never, 1_000_000));
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> context.await(never, -1));
        assertFalse(Thread.interrupted());
        CompletableFuture<String> ran = new CompletableFuture<>();
        context.execute(() -> ran.complete(Thread.currentThread().getName()));
        assertEquals("disco-session-test", ran.get(10, SECONDS));
    }

    /** Waits that end (time out) while tasks come in: a task handed to a leaving waiter is never lost. */
    @Test
    void noTaskIsLostToAWaitThatEnds() throws Exception {
        int tasks = 20_000;
        AtomicInteger ran = new AtomicInteger();
        Thread waiter = new Thread(
                () -> {
                    while (ran.get() < tasks) {
                        try {
                            context.await(
                                    new CompletableFuture<>(),
                                    ThreadLocalRandom.current().nextLong(0, 50_000));
                        } catch (TimeoutException expected) {
                            // the next wait
                        } catch (Exception e) {
                            return;
                        }
                    }
                },
                "waiter");
        waiter.start();
        for (int i = 0; i < tasks; i++) {
            context.execute(ran::incrementAndGet);
            if (i % 64 == 0) {
                Thread.onSpinWait();
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> ran.get() == tasks);
        waiter.join(10_000);
    }

    @Test
    void aFailingTaskDoesNotStopTheContext() throws Exception {
        context.runHere(() -> {
            throw new IllegalStateException("boom (expected by the test)");
        });
        CompletableFuture<Thread> next = new CompletableFuture<>();
        context.runHere(() -> next.complete(Thread.currentThread()));
        assertSame(Thread.currentThread(), next.get(1, SECONDS));
    }

    @Test
    void onceTheWorkerIsShutDownTasksAreDropped() {
        worker.shutdown();
        AtomicInteger ran = new AtomicInteger();
        assertFalse(context.runHere(ran::incrementAndGet), "dropped, and said so: a timer then runs its task itself");
        assertFalse(context.submit(ran::incrementAndGet));
        context.execute(ran::incrementAndGet);
        assertEquals(0, ran.get());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
