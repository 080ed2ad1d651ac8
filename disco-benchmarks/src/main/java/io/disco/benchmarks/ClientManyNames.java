package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Case "client-names" (issue 34, item 7): 100,000 distinct names (20,000 with {@code --quick}), each
 * locked and unlocked once through one client by 16 threads. Targets: the heap after a full GC (and
 * after the half second an idle name may keep its service) within 10 MB of where it started, and no
 * key left in etcd under the names.
 */
final class ClientManyNames implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        int names = bench.quick ? 20_000 : 100_000;
        int threads = 16;
        String base = bench.root + "/cn";
        log(
                "client-names: %d distinct names, each locked and unlocked once through one client (%d threads)",
                names, threads);
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults())) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                cycle(disco, pool, base + "/warm/", 1_000, threads); // classes loaded, pools grown
                long heap0 = Bench.usedHeap();
                long t0 = System.nanoTime();
                cycle(disco, pool, base + "/n/", names, threads);
                double seconds = (System.nanoTime() - t0) / 1e9;
                Thread.sleep(1_000); // past the half second an idle name may keep its service
                long heap1 = Bench.usedHeap();
                long keys = bench.keysUnder(base, 30);
                double grownMb = (heap1 - heap0) / (1024.0 * 1024.0);
                bench.report.row(
                        "client",
                        String.format(Locale.ROOT, "%,d names locked+unlocked once, one client", names),
                        Double.NaN,
                        Double.NaN,
                        "",
                        "names_per_s",
                        names / seconds,
                        "heap_growth_mb",
                        grownMb,
                        "keys_left",
                        keys);
                bench.report.target(
                        "heap after " + names + " idle names (full GC)",
                        "within 10 MB of the start",
                        String.format(Locale.ROOT, "%+.2f MB", grownMb),
                        grownMb <= 10,
                        grownMb <= 10 ? "" : "names kept after use");
                bench.report.target(
                        "keys left by " + names + " idle names",
                        "0",
                        Long.toString(keys),
                        keys == 0,
                        keys == 0 ? "" : "keys of released names left in etcd");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static void cycle(Disco disco, ExecutorService pool, String prefix, int names, int threads)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            all.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < names; i = next.getAndIncrement()) {
                    FencedLock lock = disco.lock(prefix + i);
                    lock.lock();
                    lock.unlock();
                }
                return null;
            }));
        }
        for (Future<?> f : all) {
            f.get(30, TimeUnit.MINUTES);
        }
    }
}
