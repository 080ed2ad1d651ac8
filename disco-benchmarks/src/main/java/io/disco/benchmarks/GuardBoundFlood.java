package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Case "guard-flood" (issue 45, item 7): a guard with {@link EtcdIssuedBound} under a flood of requests carrying
 * forged tokens (far above etcd's revision) from {@value #FORGERS} threads, its linearizable reads of etcd counted on
 * the wire ({@link RpcCounter} on the bound's own client, {@code KV/Range}). Side by side: no read interval (every
 * read starts as soon as the one before it ends, as before the interval existed) and the default interval
 * ({@value Guard#DEFAULT_BOUND_READ_INTERVAL_MILLIS} ms after a read that refused a token). For each: reads per
 * second and forged requests answered per second during the flood; a real new owner's first request during the
 * flood (lock hand-overs on the run's etcd); and, without a flood, real hand-overs one after another (reads per new
 * owner, first request's wait), which the interval must not slow. Target: at most one read per interval under the flood.
 */
final class GuardBoundFlood implements BenchCase {

    static final int FORGERS = 64;
    private static final int OWNERS_IN_FLOOD = 10;
    private static final int OWNERS_ALONE = 50;

    /** What one setting measured. */
    record Result(
            double readsPerSecond,
            double forgedPerSecond,
            double longestForgedMs,
            double[] ownerInFloodMs,
            double readsPerOwner,
            double[] ownerAloneMs) {}

    @Override
    public void run(Bench bench) throws Exception {
        long windowMs = bench.quick ? 1_000 : 3_000;
        Duration interval = Duration.ofMillis(Guard.DEFAULT_BOUND_READ_INTERVAL_MILLIS);
        log(
                "guard-flood: %d threads forging tokens for %.1f s, no read interval vs %d ms; then %d real new owners in the"
                        + " flood and %d without",
                FORGERS, windowMs / 1e3, interval.toMillis(), OWNERS_IN_FLOOD, OWNERS_ALONE);
        RpcCounter counter = new RpcCounter();
        try (Client boundClient = Client.builder()
                        .endpoints(bench.endpoints.toArray(String[]::new))
                        .interceptor(EtcdDeadlines.unary(EtcdOptions.defaults().requestTimeout()), counter)
                        .build();
                LockService lock =
                        EtcdProvider.newLock(bench.client, bench.root + "/guard-flood", EtcdOptions.defaults())) {
            boundClient.getKVClient().get(Bench.bs(bench.root)).get(10, TimeUnit.SECONDS); // connect
            Result before = measure(Duration.ZERO, boundClient, counter, lock, windowMs);
            Result after = measure(interval, boundClient, counter, lock, windowMs);
            report(bench.report, "no read interval (before)", before);
            report(bench.report, "read interval " + interval.toMillis() + " ms (after)", after);
            double most = 1000.0 / interval.toMillis();
            bench.report.target(
                    "guard bound reads under a flood of forged tokens",
                    String.format(Locale.ROOT, "<= 1 per %d ms (%.0f/s)", interval.toMillis(), most),
                    String.format(
                            Locale.ROOT,
                            "%.1f reads/s (%.0f without the interval), %.0f forged requests/s answered",
                            after.readsPerSecond,
                            before.readsPerSecond,
                            after.forgedPerSecond),
                    after.readsPerSecond <= most * 1.05,
                    "");
            bench.report.notes.add(String.format(
                    Locale.ROOT,
                    "guard-flood: %d threads sending forged tokens: %.0f etcd reads/s"
                            + " without the read interval, %.1f/s with %d ms; a real new owner's first request in the flood"
                            + " %.1f ms (median; longest %.1f) vs %.1f; real hand-overs alone %.1f vs %.1f ms, %.2f vs %.2f reads"
                            + " per new owner",
                    FORGERS,
                    before.readsPerSecond,
                    after.readsPerSecond,
                    interval.toMillis(),
                    Stats.median(after.ownerInFloodMs),
                    max(after.ownerInFloodMs),
                    Stats.median(before.ownerInFloodMs),
                    Stats.median(after.ownerAloneMs),
                    Stats.median(before.ownerAloneMs),
                    after.readsPerOwner,
                    before.readsPerOwner));
        }
    }

    private static void report(Report report, String setting, Result r) {
        report.row(
                "5 guard bound",
                "forged-token flood, " + setting,
                Double.NaN,
                Double.NaN,
                "",
                "reads_per_s",
                r.readsPerSecond,
                "forged_answered_per_s",
                r.forgedPerSecond,
                "longest_forged_ms",
                r.longestForgedMs);
        report.row(
                "5 guard bound",
                "new owner's first request in the flood, " + setting,
                Stats.median(r.ownerInFloodMs),
                max(r.ownerInFloodMs),
                "ms");
        report.samples(
                "5 guard bound",
                "new owners one after another, no flood, " + setting,
                r.ownerAloneMs,
                "reads_per_owner",
                r.readsPerOwner);
    }

    private static double max(double[] samples) {
        double m = Double.NaN;
        for (double s : samples) {
            m = Double.isNaN(m) ? s : Math.max(m, s);
        }
        return m;
    }

    private static Result measure(
            Duration interval, Client boundClient, RpcCounter counter, LockService lock, long windowMs)
            throws Exception {
        Guard guard = Guard.builder()
                .issuedBound(EtcdIssuedBound.of(boundClient))
                .boundReadInterval(interval)
                .build();
        guard.admit(lock.lock().token()).close();
        long revision = guard.highWater().orElseThrow().value();
        LongAdder answered = new LongAdder();
        AtomicLong longest = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> admitted = new AtomicReference<>();
        List<Thread> forgers = new ArrayList<>();
        double readsPerSecond;
        double forgedPerSecond;
        double[] inFlood;
        try {
            for (int i = 0; i < FORGERS; i++) {
                FencingToken forged = FencingToken.of(i == 0 ? Long.MAX_VALUE : revision + 1_000_000_000L + i);
                Thread t = new Thread(
                        () -> {
                            while (!stop.get()) {
                                long s = System.nanoTime();
                                try {
                                    guard.check(forged);
                                    admitted.set("a forged token was admitted: " + forged);
                                } catch (TokenNotIssuedException | BoundUnavailableException e) {
                                    answered.increment();
                                }
                                longest.accumulateAndGet(System.nanoTime() - s, Math::max);
                            }
                        },
                        "forger-" + i);
                t.setDaemon(true);
                forgers.add(t);
                t.start();
            }
            Thread.sleep(200); // the flood at full strength
            long reads0 = counter.calls("KV/Range");
            long answered0 = answered.sum();
            longest.set(0);
            long t0 = System.nanoTime();
            Thread.sleep(windowMs);
            double seconds = (System.nanoTime() - t0) / 1e9;
            readsPerSecond = (counter.calls("KV/Range") - reads0) / seconds;
            forgedPerSecond = (answered.sum() - answered0) / seconds;
            inFlood = newOwners(lock, guard, OWNERS_IN_FLOOD);
        } finally {
            stop.set(true);
            for (Thread t : forgers) {
                t.join(30_000);
            }
        }
        if (admitted.get() != null) {
            throw new IllegalStateException(admitted.get());
        }
        double longestForgedMs = longest.get() / 1e6;
        long reads0 = counter.calls("KV/Range");
        double[] alone = newOwners(lock, guard, OWNERS_ALONE);
        double readsPerOwner = (counter.calls("KV/Range") - reads0) / (double) OWNERS_ALONE;
        lock.unlock();
        return new Result(readsPerSecond, forgedPerSecond, longestForgedMs, inFlood, readsPerOwner, alone);
    }

    /**
     * {@code n} real hand-overs, one after another: {@code lock} released and taken again, its new token's first
     * request admitted by {@code guard}.
     *
     * @return how long each first request took to be admitted, in milliseconds
     */
    private static double[] newOwners(LockService lock, Guard guard, int n) throws Exception {
        double[] ms = new double[n];
        for (int i = 0; i < n; i++) {
            lock.unlock();
            FencingToken next = lock.lock().token();
            long s = System.nanoTime();
            guard.admit(next).close();
            ms[i] = Stats.ms(System.nanoTime() - s);
        }
        return ms;
    }
}
