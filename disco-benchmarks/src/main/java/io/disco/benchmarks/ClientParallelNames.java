package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Case "client-parallel" (issue 34): 16 threads, each locking and unlocking its own name, through one
 * client (one lease) against 16 separate services (a session each), lock+unlock per second over a
 * window. Target: the client reaches at least 0.9 x the separate services.
 */
final class ClientParallelNames implements BenchCase {

    private static final int THREADS = 16;

    @Override
    public String name() {
        return "client-parallel";
    }

    /** One thread's lock+unlock on its own name. */
    interface Cycle {
        void run() throws Exception;
    }

    @Override
    public void run(Bench bench) throws Exception {
        long windowMs = bench.quick ? 4_000 : 12_000;
        log("client-parallel: %d threads on %d names, one client vs %d services, %.0f s each", THREADS, THREADS, THREADS, windowMs / 1e3);
        double viaClient;
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults())) {
            List<Cycle> cycles = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String name = bench.root + "/cp/client/" + t;
                cycles.add(() -> {
                    FencedLock lock = disco.lock(name);
                    lock.lock();
                    lock.unlock();
                });
            }
            viaClient = rate(cycles, windowMs);
        }
        List<LockService> services = new ArrayList<>();
        double viaServices;
        try {
            List<Cycle> cycles = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                LockService s = EtcdProvider.newLock(bench.client, bench.root + "/cp/service/" + t, EtcdOptions.defaults());
                services.add(s);
                cycles.add(() -> {
                    s.lock();
                    s.unlock();
                });
            }
            viaServices = rate(cycles, windowMs);
        } finally {
            services.forEach(LockService::close);
        }
        double ratio = viaClient / viaServices;
        bench.report.row("client", THREADS + " threads x own name, one client", Double.NaN, Double.NaN, "",
                "lock_unlock_per_s", viaClient, "vs_services", ratio);
        bench.report.row("client", THREADS + " threads x own name, " + THREADS + " services", Double.NaN, Double.NaN, "",
                "lock_unlock_per_s", viaServices);
        bench.report.target("16 threads on 16 names: one client vs 16 services", ">= 0.9 x",
                String.format(Locale.ROOT, "%.3f x (%.0f/s vs %.0f/s)", ratio, viaClient, viaServices), ratio >= 0.9,
                ratio >= 0.9 ? "" : "one lease and one session thread serve all 16 names");
    }

    /** Lock+unlock per second of all threads together, after a short warm-up. */
    static double rate(List<Cycle> cycles, long windowMs) throws Exception {
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder done = new LongAdder();
        CountDownLatch finished = new CountDownLatch(cycles.size());
        List<Throwable> failures = new ArrayList<>();
        for (Cycle c : cycles) {
            Thread t = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        c.run();
                        if (measuring.get()) {
                            done.increment();
                        }
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                } finally {
                    finished.countDown();
                }
            }, "bench-parallel");
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(500);
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(windowMs);
        long count = done.sum();
        double rate = count / ((System.nanoTime() - t0) / 1e9);
        stop.set(true);
        if (!finished.await(60, TimeUnit.SECONDS) || !failures.isEmpty()) {
            throw new IllegalStateException("client-parallel: threads failed or hung: " + failures);
        }
        return rate;
    }
}
