package io.disco.provider.etcd;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The session's serial context on its own (no etcd): tasks never overlap and run in submission
 * order; a caller runs its own task when the context is idle, and only then; a task submitted by a
 * task runs after it; the backlog goes to the session thread.
 */
class SessionContextTest {

    private static final String SESSION_THREAD = "test-session-thread";
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, SESSION_THREAD));
    private final SessionContext context = new SessionContext(thread, "test context");

    @AfterEach
    void stop() {
        thread.shutdownNow();
    }

    @Test
    void anIdleContextRunsTheTaskOnTheCaller() {
        AtomicReference<String> ranOn = new AtomicReference<>();
        AtomicReference<Boolean> inside = new AtomicReference<>();
        context.runHere(() -> {
            ranOn.set(Thread.currentThread().getName());
            inside.set(SessionContext.inside());
        });
        assertEquals(Thread.currentThread().getName(), ranOn.get(), "an idle context runs the task at once, here");
        assertTrue(inside.get(), "the task runs inside the context");
        assertFalse(SessionContext.inside(), "the caller is outside again once it returns");
    }

    @Test
    void aBusyContextQueuesTheTaskForTheSessionThread() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        context.execute(() -> {
            running.countDown();
            await(release);
        });
        assertTrue(running.await(5, SECONDS));
        CompletableFuture<String> ranOn = new CompletableFuture<>();
        context.runHere(() -> ranOn.complete(Thread.currentThread().getName()));
        assertFalse(ranOn.isDone(), "runHere must not run the task while another task runs");
        release.countDown();
        assertEquals(SESSION_THREAD, ranOn.get(5, SECONDS));
    }

    @Test
    void aTaskSubmittedByATaskRunsAfterIt() throws Exception {
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        context.runHere(() -> {
            context.runHere(() -> {
                order.add("inner");
                done.complete(null);
            });
            order.add("outer ends");
        });
        done.get(5, SECONDS);
        assertEquals(List.of("outer ends", "inner"), order);
    }

    @Test
    void theCallerRunsItsOwnTaskAndHandsWhatCameMeanwhileToTheSessionThread() throws Exception {
        CountDownLatch submitted = new CountDownLatch(1);
        CompletableFuture<String> laterRanOn = new CompletableFuture<>();
        Thread other = new Thread(() -> {
            context.execute(() -> laterRanOn.complete(Thread.currentThread().getName()));
            submitted.countDown();
        }, "other-submitter");
        context.runHere(() -> {
            other.start();
            await(submitted); // queued behind this task
        });
        assertEquals(SESSION_THREAD, laterRanOn.get(5, SECONDS), "the caller must not run other people's backlog");
    }

    @Test
    void theCallerRunsItsTasksFollowUpsInOrderWithWhatCameBeforeThem() throws Exception {
        CountDownLatch submitted = new CountDownLatch(1);
        List<String> ran = new ArrayList<>();
        Thread other = new Thread(() -> {
            context.execute(() -> ran.add("other on " + Thread.currentThread().getName()));
            submitted.countDown();
        }, "other-submitter");
        context.runHere(() -> {
            other.start();
            await(submitted);
            context.execute(() -> ran.add("follow-up on " + Thread.currentThread().getName()));
        });
        String me = Thread.currentThread().getName();
        assertEquals(List.of("other on " + me, "follow-up on " + me), ran,
                "the follow-up runs here, after the task queued before it, without a hand-off");
    }

    @Test
    void tasksNeverOverlapAndRunInTheOrderEachThreadSubmittedThem() throws Exception {
        int threads = 8;
        int perThread = 5_000;
        AtomicInteger active = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        int[] last = new int[threads];
        int[] outOfOrder = new int[1];
        int[] count = new int[1]; // written only inside the context: a lost update shows an overlap too
        CountDownLatch allDone = new CountDownLatch(threads * perThread);
        List<Thread> submitters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int me = t;
            submitters.add(new Thread(() -> {
                for (int i = 1; i <= perThread; i++) {
                    int seq = i;
                    Runnable task = () -> {
                        if (active.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (last[me] != seq - 1) {
                            outOfOrder[0]++;
                        }
                        last[me] = seq;
                        count[0]++;
                        active.decrementAndGet();
                        allDone.countDown();
                    };
                    if (seq % 2 == 0) {
                        context.runHere(task);
                    } else {
                        context.execute(task);
                    }
                }
            }));
        }
        submitters.forEach(Thread::start);
        assertTrue(allDone.await(30, SECONDS), "every task runs");
        CompletableFuture<int[]> seen = new CompletableFuture<>();
        context.execute(() -> seen.complete(new int[] {count[0], outOfOrder[0]}));
        int[] s = seen.get(5, SECONDS);
        assertEquals(0, overlaps.get(), "two tasks ran at once");
        assertEquals(threads * perThread, s[0]);
        assertEquals(0, s[1], "a thread's tasks ran out of order");
    }

    @Test
    void aShutDownContextDropsTasks() throws Exception {
        context.shutDown();
        AtomicReference<String> ran = new AtomicReference<>();
        context.runHere(() -> ran.set("runHere"));
        context.execute(() -> ran.set("execute"));
        CompletableFuture<Void> flushed = CompletableFuture.runAsync(() -> { }, thread);
        flushed.get(5, SECONDS);
        assertNull(ran.get());
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(5, SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
