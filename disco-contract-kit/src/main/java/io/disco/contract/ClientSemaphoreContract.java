package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.FencedSemaphore;
import io.disco.fencing.Held;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The client's semaphore ({@link Disco#semaphore(String, int)}, issue 34 item 4): many permits of one name held
 * by the threads of one process through the client's one owner, each its own holder with its own slot and slot
 * token; giving up leaves no key; a given permit is released; a lost owner reports the loss on every held permit
 * and later acquisitions succeed through the new one; bad input changes nothing. Extend it with a
 * {@link #backend()}.
 */
public abstract class ClientSemaphoreContract extends TwoClientsContract {

    /** The distinct owners of the keys on {@code name}. */
    private Set<String> owners(String name) throws Exception {
        Set<String> owners = new HashSet<>();
        for (String key : keys(name)) {
            owners.add(backend().ownerOf(key).orElse(null));
        }
        return owners;
    }

    /**
     * The holder keys among {@code keys}: those under {@code name} (a backend may keep more per permit, etcd its
     * slot keys; ZooKeeper keeps its slots in persistent nodes, which are nobody's).
     */
    private static List<String> holders(List<String> keys, String name) {
        return keys.stream().filter(k -> k.startsWith(name + "/")).toList();
    }

    private static <T> T on(ExecutorService pool, java.util.concurrent.Callable<T> task) throws Exception {
        return pool.submit(task).get(20, TimeUnit.SECONDS);
    }

    @Test
    void eightThreadsShareThreePermitsOnOneOwnerWithTokensIncreasingPerSlot() throws Exception {
        String name = uniqueName("client-semaphore");
        int threads = 8;
        int rounds = 6;
        FencedSemaphore semaphore = disco.semaphore(name, 3);

        // Three permits at once through one client: three holders, one owner, and the limit reached.
        List<Permit> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(semaphore.acquire(SOON));
        }
        assertEquals(
                Set.of(0, 1, 2),
                Set.of(three.get(0).slot(), three.get(1).slot(), three.get(2).slot()),
                "one slot each");
        assertEquals(3, new HashSet<>(three.stream().map(Permit::key).toList()).size(), "one holder key each");
        assertEquals(1, owners(name).size(), "one owner: " + keys(name));
        assertEquals(Optional.empty(), semaphore.tryAcquire(), "the limit is reached");
        assertEquals(Optional.empty(), other.semaphore(name, 3).tryAcquire(), "for other processes too");
        three.forEach(semaphore::release);
        assertEquals(List.of(), keys(name));

        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch allThreeIn = new CountDownLatch(
                3); // the first three holders wait for each other: concurrency is shown, not hoped for
        Map<Integer, List<Long>> tokensPerSlot = new ConcurrentHashMap<>();
        Set<String> ownersSeen = ConcurrentHashMap.newKeySet();
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                all.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        Permit p = disco.semaphore(name, 3)
                                .acquire(Duration.ofSeconds(30)); // a fresh handle: the name is the semaphore
                        try {
                            int now = inside.incrementAndGet();
                            most.accumulateAndGet(now, Math::max);
                            allThreeIn.countDown();
                            assertTrue(
                                    allThreeIn.await(30, TimeUnit.SECONDS),
                                    "three permits held at once by the client's threads");
                            assertTrue(now <= 3, now + " holders at once");
                            assertTrue(p.slot() >= 0 && p.slot() < 3, "slot " + p.slot());
                            tokensPerSlot
                                    .computeIfAbsent(p.slot(), s -> new CopyOnWriteArrayList<>())
                                    .add(p.token().value());
                            ownersSeen.add(backend().ownerOf(p.key()).orElse(null));
                            inside.decrementAndGet();
                        } finally {
                            semaphore.release(p); // any handle of the name releases it
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(3, most.get(), "three permits held at once by one client's threads");
        assertEquals(1, ownersSeen.size(), "every permit on the client's one owner: " + ownersSeen);
        int acquisitions = 0;
        for (Map.Entry<Integer, List<Long>> slot : tokensPerSlot.entrySet()) {
            List<Long> tokens = slot.getValue();
            acquisitions += tokens.size();
            for (int i = 1; i < tokens.size(); i++) {
                assertTrue(
                        tokens.get(i) > tokens.get(i - 1),
                        "tokens of slot " + slot.getKey() + " strictly increase: " + tokens);
            }
        }
        assertEquals(threads * rounds, acquisitions);
        assertEquals(List.of(), keys(name));
        awaitNothingKept(disco);
    }

    /** Waits until the client keeps nothing for any name: an idle name lingers at most half a second. */
    private static void awaitNothingKept(Disco d) {
        org.awaitility.Awaitility.await().atMost(SOON).until(() -> ClientContract.namesInUse(d) == 0);
    }

    @Test
    void tryAndTimedGiveUpLeaveNoKey() throws Exception {
        String name = uniqueName("client-semaphore-giveup");
        FencedSemaphore theirs = other.semaphore(name, 2);
        Permit a = theirs.acquire(SOON);
        Permit b = theirs.acquire(SOON);
        List<String> held = keys(name);
        assertEquals(2, holders(held, name).size(), "two holder keys: " + held);

        FencedSemaphore mine = disco.semaphore(name, 2);
        assertEquals(Optional.empty(), mine.tryAcquire());
        assertEquals(held, keys(name), "tryAcquire left no key");
        assertThrows(TimeoutException.class, () -> mine.acquire(Duration.ofMillis(300)));
        assertEquals(held, keys(name), "a timed acquire that gave up left no key");

        Thread self = Thread.currentThread();
        ExecutorService interrupter = Executors.newSingleThreadExecutor();
        try {
            Future<?> interrupt = interrupter.submit(() -> {
                awaitNewKey(name, held);
                self.interrupt();
                return null;
            });
            assertThrows(InterruptedException.class, mine::acquire);
            interrupt.get(10, TimeUnit.SECONDS);
        } finally {
            Thread.interrupted();
            interrupter.shutdownNow();
        }
        assertEquals(held, keys(name), "an interrupted acquire left no key");

        theirs.release(a);
        Permit c = mine.acquire(SOON);
        assertEquals(a.slot(), c.slot(), "the freed slot");
        assertTrue(c.token().compareTo(a.token()) > 0);
        mine.release(c);
        theirs.release(b);
        assertEquals(List.of(), keys(name));
    }

    @Test
    void cancellingAnAsyncAcquireLeavesNoKey() throws Exception {
        String name = uniqueName("client-semaphore-async");
        FencedSemaphore semaphore = disco.semaphore(name, 2);
        CompletableFuture<Permit> first = semaphore.acquireAsync();
        assertCompletesOffBackendThreads(first);
        Permit a = first.get(10, TimeUnit.SECONDS);
        Permit b = semaphore.acquireAsync().get(10, TimeUnit.SECONDS);
        List<String> held = keys(name);

        CompletableFuture<Permit> waiting = semaphore.acquireAsync();
        awaitNewKey(name, held);
        assertStillWaiting(waiting, "a third permit of two");
        assertTrue(waiting.cancel(true));
        awaitKeys(name, held);

        semaphore.release(a);
        semaphore.release(b);
        assertEquals(List.of(), keys(name));
        Permit c = semaphore.acquireAsync().get(10, TimeUnit.SECONDS);
        semaphore.release(c);
        assertEquals(List.of(), keys(name));
        awaitNothingKept(disco);
    }

    @Test
    void aGivenPermitIsReleasedByAnyThreadOnce() throws Exception {
        String name = uniqueName("client-semaphore-release");
        FencedSemaphore semaphore = disco.semaphore(name, 3);
        Permit a = semaphore.acquire(SOON);
        Permit b = semaphore.acquire(SOON);
        Permit c = semaphore.acquire(SOON);
        CompletableFuture<Void> bDone = semaphore.done(b).toCompletableFuture();
        assertFalse(bDone.isDone());
        assertEquals(Optional.empty(), semaphore.err(b));

        ExecutorService another = Executors.newSingleThreadExecutor();
        try {
            on(another, () -> {
                disco.semaphore(name, 3).release(b); // not owned by a thread
                return null;
            });
        } finally {
            another.shutdownNow();
        }
        assertFalse(keys(name).stream().anyMatch(k -> k.equals(b.key())), "b's holder key is gone: " + keys(name));
        assertEquals(2, holders(keys(name), name).size(), "a's and c's holder keys remain: " + keys(name));
        bDone.get(5, TimeUnit.SECONDS);
        assertThrows(IllegalArgumentException.class, () -> semaphore.release(b), "released once");
        assertThrows(IllegalArgumentException.class, () -> semaphore.done(b));
        assertThrows(IllegalArgumentException.class, () -> semaphore.err(b));

        try (Held<Permit> d = semaphore.hold(SOON)) {
            assertEquals(b.slot(), d.grant().slot(), "b's slot was free");
            assertTrue(d.token().compareTo(b.token()) > 0, "a higher token on b's slot");
        }
        semaphore.release(a);
        semaphore.release(c);
        assertEquals(List.of(), keys(name));
    }

    @Test
    void aLostOwnerReportsTheLossOnHeldPermitsAndLaterAcquisitionsHeal() throws Exception {
        String name = uniqueName("client-semaphore-loss");
        FencedSemaphore semaphore = disco.semaphore(name, 3);
        Permit a = semaphore.acquire(SOON);
        Permit b = semaphore.acquire(SOON);
        String lostOwner = backend().ownerOf(a.key()).orElseThrow();
        Permit theirs = other.semaphore(name, 3).acquire(SOON); // the limit is reached
        CompletableFuture<Permit> waiting = semaphore.acquireAsync();
        org.awaitility.Awaitility.await()
                .atMost(SOON)
                .until(() -> holders(keys(name), name).size() == 4); // a, b, theirs and the waiting one

        backend().endOwnerOf(a.key());
        semaphore.done(a).toCompletableFuture().get(10, TimeUnit.SECONDS);
        semaphore.done(b).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertInstanceOf(SemaphoreLostException.class, semaphore.err(a).orElseThrow());
        assertThrows(SemaphoreLostException.class, () -> semaphore.release(a));
        assertThrows(
                IllegalArgumentException.class, () -> semaphore.release(a), "a lost permit is forgotten once reported");

        // The acquisition that waited at the moment of loss held nothing: it claims again through the new owner.
        Permit healed = waiting.get(10, TimeUnit.SECONDS);
        Permit later = semaphore.acquire(Duration.ofSeconds(10));
        for (Permit p : List.of(healed, later)) {
            assertNotEquals(lostOwner, backend().ownerOf(p.key()).orElse(null), "through a new owner");
            assertTrue(p.token().compareTo(a.token()) > 0 && p.token().compareTo(b.token()) > 0, "higher tokens");
        }
        assertEquals(
                List.of(healed.key(), later.key(), theirs.key()).stream()
                        .sorted()
                        .toList(),
                holders(keys(name), name),
                "no holder key of the lost owner is left");
        assertThrows(SemaphoreLostException.class, () -> semaphore.release(b));
        semaphore.release(healed);
        semaphore.release(later);
        other.semaphore(name, 3).release(theirs);
        assertEquals(List.of(), keys(name));
        awaitNothingKept(disco);
    }

    @Test
    void badInputIsRefusedAndChangesNothing() throws Exception {
        String name = uniqueName("client-semaphore-input");
        assertThrows(IllegalArgumentException.class, () -> disco.semaphore(name, 0));
        assertThrows(IllegalArgumentException.class, () -> disco.semaphore(name, -1));
        assertThrows(NullPointerException.class, () -> disco.semaphore(null, 1));
        assertThrows(IllegalArgumentException.class, () -> disco.semaphore(name + "/", 1));

        Permit theirs = other.semaphore(name, 2).acquire(SOON); // records the limit 2
        List<String> before = keys(name);
        FencedSemaphore wrong = disco.semaphore(name, 3);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> wrong.acquire(SOON));
        assertTrue(e.getMessage().contains("2") && e.getMessage().contains("3"), e.getMessage());
        assertThrows(IllegalArgumentException.class, wrong::tryAcquire);
        ExecutionException async = assertThrows(
                ExecutionException.class, () -> wrong.acquireAsync().get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, async.getCause());
        assertEquals(before, keys(name), "a refused limit changed nothing");

        FencedSemaphore right = disco.semaphore(name, 2);
        Permit mine = right.acquire(SOON);
        assertThrows(IllegalArgumentException.class, () -> disco.semaphore(name, 5), "in use here with 2 permits");
        assertThrows(IllegalArgumentException.class, () -> right.release(theirs), "another client's permit");
        assertThrows(NullPointerException.class, () -> right.release(null));
        assertThrows(NullPointerException.class, () -> right.acquire(null));
        assertThrows(
                TimeoutException.class, () -> right.acquire(Duration.ZERO), "zero is one try: no permit is free now");
        assertThrows(IllegalStateException.class, () -> disco.lock(name).tryLock(), "the name is a semaphore here");
        right.release(mine);
        other.semaphore(name, 2).release(theirs);
        assertEquals(List.of(), keys(name));
    }
}
