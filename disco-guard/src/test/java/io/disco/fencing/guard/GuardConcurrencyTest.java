package io.disco.fencing.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Many threads check tokens at once; the recorded history must be one a linearizable guard can
 * produce.
 *
 * <p>The history check. Around every check a thread first reads {@code floor}, the greatest token
 * whose acceptance had <em>completed</em> (its check had returned and its thread published it with
 * {@code accumulateAndGet(max)}) before this check started; after an accepted check it publishes its
 * own token. Every acceptance counted in {@code floor} took effect before this check began, so for
 * a correct guard the mark is already at least {@code floor} and can only grow: an accepted token
 * below the {@code floor} read before its check is a token accepted after a strictly greater one
 * had been accepted. No acceptance is ever counted too early, so a correct guard never trips this.
 * Afterwards the mark must equal the greatest accepted token, and every rejection must name as the
 * mark a token greater than the rejected one that some check really accepted.
 *
 * <p>{@link #theHistoryCheckCatchesANonAtomicGuard()} runs the same harness against a guard that
 * reads and then writes the mark without a compare-and-set, to show the check can fail.
 */
class GuardConcurrencyTest {

    private static final int THREADS = 8;
    private static final int CHECKS_PER_THREAD = 20_000;

    /** A guard under test: returns 0 when it accepts {@code token}, otherwise the mark it lost to. */
    interface Checker {
        long check(long token);

        long mark();
    }

    /** What one thread saw. */
    record ThreadLog(long[] accepted, int acceptedCount, List<long[]> rejections, long violations) {}

    record History(
            long checks,
            long accepted,
            long violations,
            long maxAccepted,
            long finalMark,
            Set<Long> acceptedTokens,
            List<long[]> rejections) {}

    @Test
    void concurrentChecksFormALinearizableHistory() throws Exception {
        Guard guard = Guard.create();
        Checker real = new Checker() {
            @Override
            public long check(long token) {
                try {
                    guard.check(FencingToken.of(token));
                    return 0;
                } catch (TokenStaleException e) {
                    assertEquals(token, e.token().value());
                    return e.highWater().value();
                }
            }

            @Override
            public long mark() {
                return guard.highWater().map(FencingToken::value).orElse(0L);
            }
        };
        History h = run(real, 42);

        assertEquals((long) THREADS * CHECKS_PER_THREAD, h.checks());
        assertTrue(
                h.accepted() > 1000 && h.accepted() < h.checks(),
                "the workload must both accept and reject often, accepted " + h.accepted());
        assertEquals(0, h.violations(), "tokens accepted after a strictly greater one had been accepted");
        assertEquals(h.maxAccepted(), h.finalMark(), "the mark must end at the greatest accepted token");
        for (long[] r : h.rejections()) {
            long token = r[0];
            long mark = r[1];
            if (mark <= token || !h.acceptedTokens().contains(mark)) {
                fail("token " + token + " was rejected against mark " + mark
                        + ", which is not a greater, accepted token");
            }
        }
    }

    @Test
    void theHistoryCheckCatchesANonAtomicGuard() throws Exception {
        AtomicLong mark = new AtomicLong();
        Checker broken = new Checker() {
            @Override
            public long check(long token) {
                long m = mark.get();
                if (token < m) {
                    return m;
                }
                // Widens the race window so the race shows on any number of cores; without it, this
                // guard was still caught within two rounds on a 2-core machine.
                Thread.yield();
                mark.set(token);
                return 0;
            }

            @Override
            public long mark() {
                return mark.get();
            }
        };
        for (int round = 0; round < 20; round++) {
            mark.set(0);
            History h = run(broken, round);
            if (h.violations() > 0 || h.finalMark() != h.maxAccepted()) {
                return;
            }
        }
        fail("20 runs against a read-then-write guard produced no detectable violation");
    }

    /**
     * Runs {@link #THREADS} threads, released together by a start gate, each checking
     * {@link #CHECKS_PER_THREAD} tokens drawn around a common, slowly rising base so that the
     * threads contend for the mark: many checks accept (often with a token equal to the mark),
     * many are rejected.
     */
    private static History run(Checker checker, long seed) throws Exception {
        AtomicLong floor = new AtomicLong();
        AtomicLong ticket = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<ThreadLog>> results = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                SplittableRandom random = new SplittableRandom(seed * THREADS + i);
                results.add(pool.submit(() -> {
                    long[] accepted = new long[CHECKS_PER_THREAD];
                    int nAccepted = 0;
                    List<long[]> rejected = new ArrayList<>();
                    long violations = 0;
                    start.await();
                    for (int n = 0; n < CHECKS_PER_THREAD; n++) {
                        long token = Math.max(1, ticket.incrementAndGet() / 4 + random.nextInt(-8, 9));
                        long before = floor.get();
                        long lostTo = checker.check(token);
                        if (lostTo == 0) {
                            if (token < before) {
                                violations++;
                            }
                            floor.accumulateAndGet(token, Math::max);
                            accepted[nAccepted++] = token;
                        } else {
                            rejected.add(new long[] {token, lostTo});
                        }
                    }
                    return new ThreadLog(accepted, nAccepted, rejected, violations);
                }));
            }
            start.countDown();

            long checks = 0;
            long nAccepted = 0;
            long violations = 0;
            long maxAccepted = 0;
            Set<Long> acceptedTokens = new HashSet<>();
            List<long[]> rejections = new ArrayList<>();
            for (Future<ThreadLog> f : results) {
                ThreadLog log = f.get();
                for (int k = 0; k < log.acceptedCount(); k++) {
                    acceptedTokens.add(log.accepted()[k]);
                    maxAccepted = Math.max(maxAccepted, log.accepted()[k]);
                }
                rejections.addAll(log.rejections());
                nAccepted += log.acceptedCount();
                checks += log.acceptedCount() + log.rejections().size();
                violations += log.violations();
            }
            return new History(checks, nAccepted, violations, maxAccepted, checker.mark(), acceptedTokens, rejections);
        } finally {
            pool.shutdownNow();
        }
    }
}
