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

/**
 * Case "client-handoff" (issue 34): 64 threads of one process on one name, through one client (they
 * queue locally behind one etcd claim) against 64 sessions (64 claims in etcd's queue), hand-offs
 * (lock+unlock) per second side by side. No target: the figures show what the local queue saves.
 */
final class ClientHandoff implements BenchCase {

    private static final int THREADS = 64;

    @Override
    public void run(Bench bench) throws Exception {
        int rounds = bench.quick ? 2 : 4;
        long windowMs = bench.quick ? 2_000 : 3_000;
        log(
                "client-handoff: %d threads on one name, one client vs %d sessions, %d rounds of %.1f s each",
                THREADS, THREADS, rounds, windowMs / 1e3);
        List<LockService> services = new ArrayList<>();
        double viaClient = 0;
        double viaSessions = 0;
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults())) {
            String name = bench.root + "/ch/client";
            List<ClientParallelNames.Cycle> client = new ArrayList<>();
            List<ClientParallelNames.Cycle> sessions = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                client.add(() -> {
                    FencedLock lock = disco.lock(name);
                    lock.lock();
                    lock.unlock();
                });
                LockService s = EtcdProvider.newLock(bench.client, bench.root + "/ch/sessions", EtcdOptions.defaults());
                services.add(s);
                sessions.add(() -> {
                    s.lock();
                    s.unlock();
                });
            }
            for (int r = 0; r < rounds; r++) { // in turn, so that warm-up and load fall on both alike
                if (r % 2 == 0) {
                    viaClient += ClientParallelNames.rate(client, windowMs) / rounds;
                    viaSessions += ClientParallelNames.rate(sessions, windowMs) / rounds;
                } else {
                    viaSessions += ClientParallelNames.rate(sessions, windowMs) / rounds;
                    viaClient += ClientParallelNames.rate(client, windowMs) / rounds;
                }
            }
        } finally {
            services.forEach(LockService::close);
        }
        bench.report.row(
                "client",
                THREADS + " threads, one name, one client (local queue, 1 claim)",
                Double.NaN,
                Double.NaN,
                "",
                "handoffs_per_s",
                viaClient,
                "vs_sessions",
                viaClient / viaSessions);
        bench.report.row(
                "client",
                THREADS + " threads, one name, " + THREADS + " sessions",
                Double.NaN,
                Double.NaN,
                "",
                "handoffs_per_s",
                viaSessions);
        bench.report.notes.add(String.format(
                Locale.ROOT,
                "client-handoff: %d threads on one name: %.0f hand-offs/s through one"
                        + " client, %.0f/s through %d sessions (%.2f x)",
                THREADS,
                viaClient,
                viaSessions,
                THREADS,
                viaClient / viaSessions));
    }
}
