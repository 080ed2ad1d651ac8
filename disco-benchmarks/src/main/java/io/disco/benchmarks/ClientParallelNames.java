package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Case "client-parallel" (issue 34): 16 threads, each locking and unlocking its own name, through one
 * client (one lease) against 16 separate services (a session each), and 16 services on one shared
 * session for the cause; lock+unlock per second, the variants measured in short windows taken in
 * turn (so that warm-up and the load of a shared machine fall on all alike). Target: the client
 * reaches at least 0.9 x the separate services.
 */
final class ClientParallelNames implements BenchCase {

    private static final int THREADS = 16;

    /** One thread's lock+unlock on its own name. */
    interface Cycle {
        void run() throws Exception;
    }

    @Override
    public void run(Bench bench) throws Exception {
        int rounds = bench.quick ? 3 : 6;
        long windowMs = bench.quick ? 1_500 : 2_500;
        log(
                "client-parallel: %d threads on %d names; one client, %d services, %d services on one session; %d rounds of %.1f s each",
                THREADS, THREADS, THREADS, THREADS, rounds, windowMs / 1e3);
        List<LockService> services = new ArrayList<>();
        EtcdSession shared = EtcdSession.open(bench.client, EtcdOptions.defaults());
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults())) {
            List<List<Cycle>> variants = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (int t = 0; t < THREADS; t++) {
                String name = bench.root + "/cp/client/" + t;
                variants.get(0).add(() -> {
                    FencedLock lock = disco.lock(name);
                    lock.lock();
                    lock.unlock();
                });
                LockService own =
                        EtcdProvider.newLock(bench.client, bench.root + "/cp/service/" + t, EtcdOptions.defaults());
                services.add(own);
                variants.get(1).add(() -> {
                    own.lock();
                    own.unlock();
                });
                LockService onShared = shared.newLock(bench.root + "/cp/shared/" + t);
                services.add(onShared);
                variants.get(2).add(() -> {
                    onShared.lock();
                    onShared.unlock();
                });
            }
            double[] sum = new double[3];
            for (int r = 0; r < rounds; r++) {
                for (int j = 0; j < 3; j++) {
                    int v = (r + j) % 3;
                    sum[v] += rate(variants.get(v), windowMs);
                }
            }
            double viaClient = sum[0] / rounds;
            double viaServices = sum[1] / rounds;
            double viaShared = sum[2] / rounds;
            double ratio = viaClient / viaServices;
            bench.report.row(
                    "client",
                    THREADS + " threads x own name, one client",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "lock_unlock_per_s",
                    viaClient,
                    "vs_services",
                    ratio);
            bench.report.row(
                    "client",
                    THREADS + " threads x own name, " + THREADS + " services",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "lock_unlock_per_s",
                    viaServices);
            bench.report.row(
                    "client",
                    THREADS + " threads x own name, " + THREADS + " services on 1 session",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "lock_unlock_per_s",
                    viaShared,
                    "vs_services",
                    viaShared / viaServices);
            bench.report.target(
                    "16 threads on 16 names: one client vs 16 services",
                    ">= 0.9 x",
                    String.format(Locale.ROOT, "%.3f x (%.0f/s vs %.0f/s)", ratio, viaClient, viaServices),
                    ratio >= 0.9,
                    ratio >= 0.9
                            ? ""
                            : String.format(
                                    Locale.ROOT,
                                    "16 services on one session reach %.3f x by themselves",
                                    viaShared / viaServices));
        } finally {
            services.forEach(LockService::close);
            shared.close();
        }
    }

    /** Lock+unlock per second of all threads together over {@code windowMs}, after a short warm-up. */
    static double rate(List<Cycle> cycles, long windowMs) throws Exception {
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder done = new LongAdder();
        CountDownLatch finished = new CountDownLatch(cycles.size());
        List<Throwable> failures = new ArrayList<>();
        for (Cycle c : cycles) {
            Thread t = new Thread(
                    () -> {
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
                    },
                    "bench-parallel");
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(300);
        measuring.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(windowMs);
        long count = done.sum();
        double rate = count / ((System.nanoTime() - t0) / 1e9);
        stop.set(true);
        if (!finished.await(60, TimeUnit.SECONDS) || !failures.isEmpty()) {
            throw new IllegalStateException("threads failed or hung: " + failures);
        }
        return rate;
    }
}
