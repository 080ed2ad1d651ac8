package io.disco.fencing.guard;

import static io.disco.fencing.guard.Tokens.POISON;
import static io.disco.fencing.guard.Tokens.t;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.testservers.RequestFlood;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The read interval of the guard's issued bound ({@link Guard.Builder#boundReadInterval}), with in-process bounds
 * that count and time their reads (against a real etcd and ZooKeeper: {@code BoundReadRateEtcdTest} and
 * {@code ZooKeeperIssuedBoundTest}): after a read that refused a token or failed, the next starts no sooner than the
 * interval after it; a read that only confirmed lets the next start at once; a request that arrives while a read is
 * in flight is decided by the next read, never starved; an interrupted request leaves the pending read to the next;
 * an idle guard reads nothing.
 */
class BoundReadIntervalTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** A bound answering what {@code answer} gives, recording when each read began. */
    static final class Recording implements IssuedBound {
        final List<Long> startedNanos = new CopyOnWriteArrayList<>();
        private final Supplier<CompletionStage<FencingToken>> answer;

        Recording(Supplier<CompletionStage<FencingToken>> answer) {
            this.answer = answer;
        }

        static Recording at(AtomicLong revision) {
            return new Recording(() -> CompletableFuture.completedFuture(FencingToken.of(revision.get())));
        }

        @Override
        public CompletionStage<FencingToken> current() {
            startedNanos.add(System.nanoTime());
            return answer.get();
        }

        int reads() {
            return startedNanos.size();
        }

        /** Milliseconds between the starts of read {@code i - 1} and read {@code i}. */
        double gapMillis(int i) {
            return (startedNanos.get(i) - startedNanos.get(i - 1)) / 1e6;
        }
    }

    /** The answers of a guard to a forged token that the floods count: refused as not issued, or as unconfirmable. */
    private static final List<Class<? extends Throwable>> REFUSALS =
            List.of(TokenNotIssuedException.class, BoundUnavailableException.class);

    /** {@code count} threads sending {@code guard} a forged token each until closed. */
    static RequestFlood flood(Guard guard, int count) {
        return RequestFlood.start(
                "flood",
                count,
                i -> {
                    FencingToken forged = FencingToken.of(Long.MAX_VALUE - i);
                    guard.check(forged);
                    throw new AssertionError(forged + " admitted");
                },
                REFUSALS);
    }

    /** A flood that ran for half a second and was closed, and how long it ran. */
    private record Flooded(RequestFlood flood, long elapsedNanos) {}

    /** Floods {@code g} with 20 threads for at least 500 ms, every one answered; no answer but a refusal. */
    private static Flooded floodForHalfASecond(Guard g) throws Exception {
        long start = System.nanoTime();
        try (RequestFlood flood = flood(g, 20)) {
            assertTrue(flood.awaitEveryThreadAnswered(Duration.ofSeconds(10)));
            Awaitility.await()
                    .atMost(WAIT)
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(500));
            flood.close();
            long elapsed = System.nanoTime() - start;
            assertEquals(List.of(), flood.unexpected());
            return new Flooded(flood, elapsed);
        }
    }

    private static long most(long elapsedNanos, Duration interval) {
        return (long) Math.ceil(elapsedNanos / (double) interval.toNanos()) + 1;
    }

    @Test
    void theDefaultIntervalIsFiftyMilliseconds() {
        assertEquals(50, Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS);
        assertThrows(IllegalArgumentException.class, () -> Guard.builder().boundReadInterval(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> Guard.builder().boundReadInterval(null));
        Guard.builder().boundReadInterval(Duration.ZERO); // no spacing: allowed
        IssuedBound any = () -> CompletableFuture.completedFuture(t(1));
        assertThrows(
                IllegalArgumentException.class,
                () -> ConfirmedBound.of(any, Duration.ofSeconds(1), Duration.ofNanos(-1)));
        assertThrows(NullPointerException.class, () -> ConfirmedBound.of(any, Duration.ofSeconds(1), null));
        assertTrue(ConfirmedBound.of(any, Duration.ofSeconds(1)).toString().contains("interval=50 ms"));
    }

    @Test
    void refusalsSpaceTheReadsByTheIntervalReadsThatOnlyConfirmDoNot() throws Exception {
        Duration interval = Duration.ofMillis(200);
        AtomicLong revision = new AtomicLong(100);
        Recording bound = Recording.at(revision);
        Guard g = Guard.builder().issuedBound(bound).boundReadInterval(interval).build();
        for (int i = 0; i < 4; i++) {
            assertThrows(TokenNotIssuedException.class, () -> g.check(POISON));
        }
        assertEquals(4, bound.reads());
        for (int i = 1; i < 4; i++) {
            // the read records its start a moment after the guard does; a busy machine may stretch that moment
            assertTrue(
                    bound.gapMillis(i) >= interval.toMillis() - 20,
                    "read " + i + " began " + bound.gapMillis(i)
                            + " ms after a read that refused a token: at least the interval");
        }
        for (int i = 0; i < 6; i++) { // new owners, one after another; the first waits out the last refusal's interval
            g.admit(t(revision.incrementAndGet())).close();
        }
        assertEquals(10, bound.reads(), "one read per new owner");
        for (int i = 6; i < 10; i++) {
            assertTrue(
                    bound.gapMillis(i) < interval.toMillis() / 2,
                    "read " + i + " began " + bound.gapMillis(i)
                            + " ms after a read that only confirmed: not held back by the interval");
        }
        assertEquals(Optional.of(t(106)), g.highWater());
    }

    @Test
    void aFloodOfRefusalsCostsAtMostOneReadPerIntervalAndTheGuardIsIdleAfterIt() throws Exception {
        Recording bound = Recording.at(new AtomicLong(100));
        Guard g = Guard.builder().issuedBound(bound).initialToken(t(100)).build();
        Duration interval = Duration.ofMillis(Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS);
        Flooded flooded = floodForHalfASecond(g);
        assertEquals(0, flooded.flood().count(BoundUnavailableException.class));
        assertTrue(flooded.flood().count(TokenNotIssuedException.class) >= 20);
        long elapsed = flooded.elapsedNanos();
        assertTrue(
                bound.reads() <= most(elapsed, interval), bound.reads() + " reads in " + elapsed / 1_000_000 + " ms");
        int after = bound.reads();
        Awaitility.await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> bound.reads() == after);
        assertEquals(Optional.of(t(100)), g.highWater());
    }

    @Test
    void readsThatFailAnswerEveryRequestAndAreSpacedByTheInterval() throws Exception {
        IllegalStateException down = new IllegalStateException("no leader");
        Recording bound = new Recording(() -> CompletableFuture.failedFuture(down));
        Guard g = Guard.builder().issuedBound(bound).initialToken(t(5)).build();
        Duration interval = Duration.ofMillis(Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS);
        Flooded flooded = floodForHalfASecond(g);
        assertEquals(0, flooded.flood().count(TokenNotIssuedException.class), "nothing refused without an answer");
        long longest = flooded.flood().longestNanos();
        assertTrue(
                longest < TimeUnit.SECONDS.toNanos(2),
                "each answered within about the interval: " + longest / 1e6 + " ms");
        long elapsed = flooded.elapsedNanos();
        assertTrue(
                bound.reads() <= most(elapsed, interval), bound.reads() + " reads in " + elapsed / 1_000_000 + " ms");
        BoundUnavailableException e = assertThrows(BoundUnavailableException.class, () -> g.check(t(6)));
        assertEquals(down, e.getCause());
        g.check(t(5)); // the current owner goes on
    }

    @Test
    void requestsThatArriveWhileAReadIsInFlightAreDecidedByTheNextNeverStarved() throws Exception {
        // reads that never answer: each ends at the bound timeout; every request must be answered within two of them
        Duration timeout = Duration.ofMillis(200);
        Recording bound = new Recording(CompletableFuture::new);
        Guard g = Guard.builder()
                .issuedBound(bound)
                .boundTimeout(timeout)
                .initialToken(t(5))
                .build();
        try (RequestFlood flood = flood(g, 20)) {
            assertTrue(flood.awaitEveryThreadAnswered(Duration.ofSeconds(10)), "every request answered");
            Awaitility.await().atMost(WAIT).until(() -> bound.reads() >= 6);
            flood.close();
            assertEquals(List.of(), flood.unexpected());
            long bounded = 2 * timeout.toMillis() + Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS + 1000;
            assertTrue(
                    flood.longestNanos() < TimeUnit.MILLISECONDS.toNanos(bounded),
                    "the read in flight, the interval" + " and one read: " + flood.longestNanos() / 1e6 + " ms");
            long unavailable = flood.count(BoundUnavailableException.class);
            assertTrue(unavailable >= 2L * 20, "all of a read's requests answered by it: " + unavailable);
        }
    }

    @Test
    void aRequestArrivingDuringAReadRegistersWithTheNextWhichStartsOnlyAfterIt() throws Exception {
        IssuedBoundTest.HandBound bound = new IssuedBoundTest.HandBound();
        Guard g = Guard.builder()
                .issuedBound(bound)
                .boundReadInterval(Duration.ofMillis(300))
                .initialToken(t(10))
                .build();
        Future<?> owner = pool.submit(() -> g.check(t(20)));
        Awaitility.await().atMost(WAIT).until(() -> bound.reads.size() == 1);
        Future<?> forged = pool.submit(() -> g.check(POISON));
        Awaitility.await().during(Duration.ofMillis(100)).atMost(WAIT).until(() -> bound.reads.size() == 1);
        bound.answer(0, 25); // confirms the owner; the forged request was not registered with it
        owner.get(10, TimeUnit.SECONDS);
        Awaitility.await()
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(2))
                .until(() -> bound.reads.size() == 2); // at once: read 0 refused nothing
        long read1 = System.nanoTime(); // a moment after read 1 began
        assertFalse(forged.isDone(), "not refused by a read that began before it arrived");
        bound.answer(1, 25);
        ExecutionException e = assertThrows(ExecutionException.class, () -> forged.get(10, TimeUnit.SECONDS));
        assertInstanceOf(TokenNotIssuedException.class, e.getCause());

        Future<?> again = pool.submit(() -> g.check(POISON));
        Awaitility.await().atMost(WAIT).pollInterval(Duration.ofMillis(2)).until(() -> bound.reads.size() == 3);
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - read1);
        assertTrue(
                waitedMs >= 250, "read 1 refused a token: read 2 began " + waitedMs + " ms after it, the interval 300");
        bound.answer(2, 26);
        assertInstanceOf(
                TokenNotIssuedException.class,
                assertThrows(ExecutionException.class, () -> again.get(10, TimeUnit.SECONDS))
                        .getCause());
        assertEquals(Optional.of(t(20)), g.highWater());
    }

    @Test
    void anInterruptedRequestLeavesThePendingReadUnstartedAndTheNextRequestStartsIt() throws Exception {
        Recording bound = Recording.at(new AtomicLong(100));
        Guard g = Guard.builder()
                .issuedBound(bound)
                .boundReadInterval(Duration.ofMillis(300))
                .build();
        assertThrows(TokenNotIssuedException.class, () -> g.check(POISON)); // read 0 refused: the next waits
        AtomicLong interrupted = new AtomicLong();
        Thread waiter = new Thread(() -> {
            try {
                g.check(POISON);
            } catch (BoundUnavailableException e) {
                if (Thread.currentThread().isInterrupted() && e.getCause() instanceof InterruptedException) {
                    interrupted.incrementAndGet();
                }
            }
        });
        waiter.start();
        waiter.interrupt();
        waiter.join(10_000);
        assertEquals(1, interrupted.get(), "refused as interrupted, the flag kept");
        Awaitility.await().during(Duration.ofMillis(500)).atMost(WAIT).until(() -> bound.reads() == 1); // idle: no read
        assertThrows(TokenNotIssuedException.class, () -> g.check(POISON));
        assertEquals(2, bound.reads());
        g.check(t(100));
        assertEquals(2, bound.reads());
    }

    @Test
    void zeroSpacesNothing() {
        Recording bound = Recording.at(new AtomicLong(100));
        Guard g = Guard.builder()
                .issuedBound(bound)
                .boundReadInterval(Duration.ZERO)
                .build();
        long start = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            assertThrows(TokenNotIssuedException.class, () -> g.check(POISON));
        }
        assertEquals(20, bound.reads(), "a read per refusal, as the requests arrive");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void underMixedLoadNoIssuedTokenIsRefusedAndNoForgedOneAdmitted() throws Exception {
        // the revision as the read begins, answered a moment later: tokens issued meanwhile are above the answer,
        // so a read that began before a request arrived must never refuse it
        AtomicLong revision = new AtomicLong(1);
        IssuedBound bound = () -> {
            FencingToken now = FencingToken.of(revision.get());
            return CompletableFuture.supplyAsync(
                    () -> now, CompletableFuture.delayedExecutor(200, TimeUnit.MICROSECONDS));
        };
        KeyedGuard guards = Guard.builder()
                .issuedBound(bound)
                .boundReadInterval(Duration.ofMillis(5))
                .buildKeyed();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder admitted = new LongAdder();
        LongAdder refused = new LongAdder();
        ConcurrentLinkedQueue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        List<Future<?>> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String key = "owner-" + i;
            threads.add(pool.submit(
                    () -> { // a new owner after another on its own key: a token issued, then sent
                        while (!stop.get()) {
                            FencingToken issued = t(revision.incrementAndGet());
                            try {
                                guards.forKey(key).check(issued);
                                admitted.increment();
                            } catch (Throwable e) {
                                wrong.add(new AssertionError("issued token " + issued + " refused", e));
                            }
                        }
                    }));
        }
        for (int i = 0; i < 8; i++) {
            String key = "forger-" + i;
            threads.add(pool.submit(() -> {
                while (!stop.get()) {
                    FencingToken forged = t(revision.get() + 1_000_000);
                    try {
                        guards.forKey(key).check(forged);
                        wrong.add(new AssertionError("forged token " + forged + " admitted"));
                    } catch (TokenNotIssuedException e) {
                        refused.increment();
                    } catch (Throwable e) {
                        wrong.add(e);
                    }
                }
            }));
        }
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> admitted.sum() >= 2000 && refused.sum() >= 500 || !wrong.isEmpty());
        stop.set(true);
        for (Future<?> f : threads) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(List.of(), List.copyOf(wrong));
    }
}
