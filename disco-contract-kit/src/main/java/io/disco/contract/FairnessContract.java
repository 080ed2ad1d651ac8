package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's fairness rules (issue 45, items 1 and 2), the same on every backend:
 * <ul>
 *   <li>Each process (each client) holds one place in the backend's FIFO queue of a name, taken when its first
 *       thread asks; its threads take turns through that place, in the order they asked. A hand-over between
 *       two threads of one process goes through the backend: a process that asked before the hand-over is
 *       served first. So a waiting thread is overtaken by at most one hold of each other process per turn of
 *       its own process.</li>
 *   <li>A writer is never starved by the readers of another process: once a writer (of any process) has
 *       queued behind a process's read claim, none of that process's threads joins the claim; the writer waits
 *       only for the read holds in progress when it asked.</li>
 * </ul>
 * Extend it with a {@link #backend()}.
 */
public abstract class FairnessContract extends ContractSupport {

    private static final int TTL_SECONDS = 30;
    private static final long WAIT_SECONDS = 20;

    private final List<ExecutorService> threads = new ArrayList<>();

    @AfterEach
    void stopThreads() {
        threads.forEach(ExecutorService::shutdownNow);
    }

    private ExecutorService thread() {
        ExecutorService e = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fairness-contract");
            t.setDaemon(true);
            return t;
        });
        threads.add(e);
        return e;
    }

    /**
     * Readers of one process in overlapping holds of 200 ms, for as long as the test lets them; a writer in
     * another process asks: it is granted within the holds in progress, not after the readers stop.
     */
    @Test
    void aWriterIsNotStarvedByTheOverlappingReadersOfAnotherProcess() throws Exception {
        String name = uniqueName("fair-rw-remote-writer");
        assertWriterGetsIn(name, client(TTL_SECONDS), client(TTL_SECONDS));
    }

    /** The same with the writer in the readers' own process: the local lock queues new readers behind it. */
    @Test
    void aWriterIsNotStarvedByTheOverlappingReadersOfItsOwnProcess() throws Exception {
        String name = uniqueName("fair-rw-local-writer");
        Disco one = client(TTL_SECONDS);
        assertWriterGetsIn(name, one, one);
    }

    private void assertWriterGetsIn(String name, Disco readers, Disco writerClient) throws Exception {
        AtomicBoolean reading = new AtomicBoolean(true);
        AtomicInteger readHolds = new AtomicInteger();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            FencedLock read = readers.readWriteLock(name).readLock();
            long offset = i * 50L;
            loops.add(CompletableFuture.runAsync(
                    () -> {
                        try {
                            Thread.sleep(offset); // staggered, so that the holds overlap
                            while (reading.get()) {
                                if (read.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                                    readHolds.incrementAndGet();
                                    Thread.sleep(200); // the read's work
                                    read.unlock();
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    thread()));
        }
        org.awaitility.Awaitility.await().atMost(SOON).until(() -> readHolds.get() >= 8); // the reads overlap
        FencedLock write = writerClient.readWriteLock(name).writeLock();
        long asked = System.nanoTime();
        CompletableFuture<Long> written = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        if (!write.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            return -1L;
                        }
                        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
                        write.unlock();
                        return waited;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                thread());
        long waited;
        try {
            waited = written.get(WAIT_SECONDS + 5, TimeUnit.SECONDS);
        } finally {
            reading.set(false);
        }
        CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        System.out.println("writer waited " + waited + " ms behind " + readHolds.get() + " read holds in all");
        assertTrue(waited >= 0, "the writer was starved for " + WAIT_SECONDS + " s");
        assertTrue(
                waited < 3000,
                "the writer waits for the read holds in progress only (200 ms each), waited " + waited + " ms");
        awaitKeyCount(name, 0);
    }

    /**
     * Per-process FIFO: a hand-over between two threads of process A goes through the backend, so process B,
     * which asked while A's second thread waited, is granted before it.
     */
    @Test
    void aProcessThatAskedBeforeAHandOverIsServedBeforeTheNextThreadOfTheHolder() throws Exception {
        String name = uniqueName("fair-lock-handover");
        Disco a = client(TTL_SECONDS);
        Disco b = client(TTL_SECONDS);
        List<String> order = new CopyOnWriteArrayList<>();
        ExecutorService holder = thread();
        FencedLock first = a.lock(name);
        holder.submit(() -> {
                    first.lock();
                    return null;
                })
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        ExecutorService secondThread = thread();
        Thread a2 = secondThread.submit(Thread::currentThread).get(WAIT_SECONDS, TimeUnit.SECONDS);
        CompletableFuture<FencingToken> second = holdOnce(a.lock(name), "a2", order, secondThread);
        org.awaitility.Awaitility.await()
                .atMost(SOON)
                .until(() -> a2.getState() == Thread.State.TIMED_WAITING
                        || a2.getState() == Thread.State.WAITING); // a2 waits in A's local queue
        CompletableFuture<FencingToken> other = holdOnce(b.lock(name), "b", order);
        awaitKeyCount(name, 2); // A's held key and B's waiting one
        holder.submit(() -> {
                    first.unlock();
                    return null;
                })
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        FencingToken tb = other.get(WAIT_SECONDS, TimeUnit.SECONDS);
        FencingToken ta = second.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of("b", "a2"), order, "B asked before A's hand-over");
        assertTrue(ta.isNewerThan(tb));
        awaitKeyCount(name, 0);
    }

    /**
     * The bound on that unfairness: process B re-acquires in a tight loop; the three waiting threads of
     * process A are each granted, and B holds at most once between two of A's holds.
     */
    @Test
    void theThreadsOfAProcessAreOvertakenAtMostOnceByEachOtherProcessPerTurn() throws Exception {
        String name = uniqueName("fair-lock-bound");
        Disco a = client(TTL_SECONDS);
        Disco b = client(TTL_SECONDS);
        List<String> order = new CopyOnWriteArrayList<>();
        AtomicBoolean looping = new AtomicBoolean(true);
        FencedLock bLock = b.lock(name);
        CompletableFuture<Void> bLoop = CompletableFuture.runAsync(
                () -> {
                    try {
                        while (looping.get()) {
                            if (bLock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                                order.add("b");
                                Thread.sleep(20); // B's hold: a hold that lasts is what A's threads wait behind
                                bLock.unlock();
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                thread());
        org.awaitility.Awaitility.await().atMost(SOON).until(() -> order.size() >= 3);
        List<CompletableFuture<FencingToken>> mine = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            mine.add(holdOnce(a.lock(name), "a", order));
        }
        try {
            CompletableFuture.allOf(mine.toArray(CompletableFuture[]::new)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        } finally {
            looping.set(false);
        }
        bLoop.get(WAIT_SECONDS, TimeUnit.SECONDS);
        List<String> fromFirstA = order.subList(order.indexOf("a"), order.lastIndexOf("a") + 1);
        int bInARow = 0;
        for (String who : fromFirstA) {
            bInARow = who.equals("b") ? bInARow + 1 : 0;
            assertTrue(bInARow <= 1, "B held twice in a row while A's threads waited: " + fromFirstA);
        }
        awaitKeyCount(name, 0);
    }

    /** On a thread of its own: takes {@code lock}, records {@code who} in {@code order}, holds 50 ms, releases. */
    private CompletableFuture<FencingToken> holdOnce(FencedLock lock, String who, List<String> order) {
        return holdOnce(lock, who, order, thread());
    }

    private CompletableFuture<FencingToken> holdOnce(
            FencedLock lock, String who, List<String> order, ExecutorService on) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        if (!lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            throw new IllegalStateException(who + " was not granted within " + WAIT_SECONDS + " s");
                        }
                        order.add(who);
                        FencingToken token = lock.token();
                        Thread.sleep(50); // the hold itself: the others queue behind it, no event ends it
                        lock.unlock();
                        return token;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                on);
    }
}
