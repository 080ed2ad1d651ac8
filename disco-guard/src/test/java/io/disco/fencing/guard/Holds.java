package io.disco.fencing.guard;

import static java.util.concurrent.TimeUnit.SECONDS;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/** Named latches that hold a test's handlers mid-request: the handler {@link #hold}s, the test {@link #release}s. */
final class Holds {

    private final Map<String, CountDownLatch> released = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

    private static CountDownLatch latch(Map<String, CountDownLatch> map, String name) {
        return map.computeIfAbsent(name, k -> new CountDownLatch(1));
    }

    /** In a handler: says it has entered, then waits (at most 30 s) until the test releases {@code name}. */
    void hold(String name) {
        enter(name);
        awaitRelease(name);
    }

    /** In a handler that holds on another thread: says it has entered without waiting. */
    void enter(String name) {
        latch(entered, name).countDown();
    }

    /** In the test: waits (at most 5 s) until a handler holds {@code name}; false if none did. */
    boolean awaitEntered(String name) throws InterruptedException {
        return latch(entered, name)
                .await(20, SECONDS); // bounded: a first call on a fresh server took over 5 s on 2 loaded cores
    }

    void release(String name) {
        latch(released, name).countDown();
    }

    void releaseAll() {
        released.values().forEach(CountDownLatch::countDown);
    }

    /** In a handler: waits for the release of {@code name} only (after {@link #enter}). */
    void awaitRelease(String name) {
        try {
            if (!latch(released, name).await(30, SECONDS)) {
                throw new IllegalStateException("hold " + name + " never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
