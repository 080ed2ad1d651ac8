package io.disco.testservers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A flood of requests for a test of what a server-side check costs under load (a guard sent forged tokens, say):
 * {@code threads} daemon threads each send their request again and again until {@link #close}d, and the flood counts
 * the answers by the refusal each request threw, keeps every other throwable as unexpected, and records the longest
 * a request took. A request that must never pass throws an {@link AssertionError} of its own when it does, which is
 * kept as unexpected too.
 *
 * <pre>{@code
 * try (RequestFlood flood = RequestFlood.start("forger", 20, i -> {
 *          guard.check(forged[i]);
 *          throw new AssertionError(forged[i] + " admitted");
 *      }, List.of(TokenNotIssuedException.class))) {
 *     assertTrue(flood.awaitEveryThreadAnswered(Duration.ofSeconds(10)));
 *     ...
 *     flood.close();
 *     assertEquals(List.of(), flood.unexpected());
 * }
 * }</pre>
 */
public final class RequestFlood implements AutoCloseable {

    /** One thread's request. */
    @FunctionalInterface
    public interface Request {
        /**
         * Sends one request.
         *
         * @param thread the index of the thread sending it, from 0
         * @throws Exception the request's answer, when it is a refusal (or unexpected)
         */
        void send(int thread) throws Exception;
    }

    private final List<Class<? extends Throwable>> refusals;
    private final Map<Class<? extends Throwable>, LongAdder> counts = new ConcurrentHashMap<>();
    private final LongAdder returned = new LongAdder();
    private final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
    private final AtomicLong longestNanos = new AtomicLong();
    private final CountDownLatch everyThreadAnswered;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();

    private RequestFlood(int threads, List<Class<? extends Throwable>> refusals) {
        this.refusals = List.copyOf(refusals);
        this.everyThreadAnswered = new CountDownLatch(threads);
        for (Class<? extends Throwable> refusal : this.refusals) {
            counts.put(refusal, new LongAdder());
        }
    }

    /**
     * Starts the flood.
     *
     * @param name the threads' name, followed by {@code -<index>}
     * @param threads how many threads send requests, at least 1
     * @param request what each thread sends
     * @param refusals the answers counted (each request's throwable is counted under the first of these it is an
     *     instance of); any other throwable is unexpected
     * @return the running flood; the caller closes it
     * @throws IllegalArgumentException if {@code threads < 1}
     * @throws NullPointerException if an argument is null
     */
    public static RequestFlood start(
            String name, int threads, Request request, List<Class<? extends Throwable>> refusals) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(refusals, "refusals");
        if (threads < 1) {
            throw new IllegalArgumentException("a flood needs at least 1 thread, got " + threads);
        }
        RequestFlood flood = new RequestFlood(threads, refusals);
        for (int i = 0; i < threads; i++) {
            int index = i;
            Thread t = new Thread(() -> flood.send(index, request), name + "-" + i);
            t.setDaemon(true);
            flood.threads.add(t);
        }
        flood.threads.forEach(Thread::start);
        return flood;
    }

    private void send(int index, Request request) {
        boolean first = true;
        while (!stop.get()) {
            long s = System.nanoTime();
            try {
                request.send(index);
                returned.increment();
            } catch (Throwable e) {
                refusals.stream()
                        .filter(r -> r.isInstance(e))
                        .findFirst()
                        .ifPresentOrElse(r -> counts.get(r).increment(), () -> unexpected.add(e));
            }
            longestNanos.accumulateAndGet(System.nanoTime() - s, Math::max);
            if (first) {
                first = false;
                everyThreadAnswered.countDown();
            }
        }
    }

    /**
     * Waits until every thread has had one answer: the flood is at full strength.
     *
     * @param timeout how long to wait at the most
     * @return whether every thread had an answer within {@code timeout}
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitEveryThreadAnswered(Duration timeout) throws InterruptedException {
        return everyThreadAnswered.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * @param refusal one of the refusals the flood was started with
     * @return how many requests were answered with it so far
     * @throws IllegalArgumentException if the flood does not count {@code refusal}
     */
    public long count(Class<? extends Throwable> refusal) {
        LongAdder count = counts.get(refusal);
        if (count == null) {
            throw new IllegalArgumentException(refusal + " is not one of the refusals counted: " + refusals);
        }
        return count.sum();
    }

    /** @return how many requests were refused so far, by any of the refusals counted */
    public long refused() {
        return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** @return how many requests returned without throwing so far */
    public long returned() {
        return returned.sum();
    }

    /** @return the throwables that were no refusal, in the order they came */
    public List<Throwable> unexpected() {
        return List.copyOf(unexpected);
    }

    /** @return the longest a request took so far, in nanoseconds */
    public long longestNanos() {
        return longestNanos.get();
    }

    /**
     * Stops the threads and waits for each to end; idempotent.
     *
     * @throws AssertionError if a thread did not end within 30 s (its request is wedged)
     * @throws InterruptedException if interrupted while waiting
     */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not stop: its request is wedged");
            }
        }
    }
}
