package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import java.util.Locale;

/**
 * Case "client-lock" (issue 34): one lock+unlock through {@code disco.lock(name)} (the name's entry
 * and service made on the lock and dropped on the unlock, every time) against the same through a
 * {@code LockService} kept open, interleaved round by round on one client. Target: the client costs at
 * most 5 % more.
 */
final class ClientVsService implements BenchCase {

    @Override
    public String name() {
        return "client-lock";
    }

    @Override
    public void run(Bench bench) throws Exception {
        int warm = bench.quick ? 60 : 500;
        int rounds = bench.quick ? 300 : 2000;
        log("client-lock: %d warm-up + %d interleaved rounds, disco.lock(name) vs LockService", warm, rounds);
        EtcdSession session = EtcdSession.open(bench.client, EtcdOptions.defaults());
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults());
             LockService service = session.newLock(bench.root + "/cl/service")) {
            String name = bench.root + "/cl/client";
            double[][] samples = new double[2][rounds];
            for (int i = 0; i < warm + rounds; i++) {
                for (int j = 0; j < 2; j++) {
                    int v = (i + j) % 2;
                    long s = System.nanoTime();
                    if (v == 0) {
                        FencedLock lock = disco.lock(name);
                        lock.lock();
                        lock.unlock();
                    } else {
                        service.lock();
                        service.unlock();
                    }
                    long e = System.nanoTime();
                    if (i >= warm) {
                        samples[v][i - warm] = Stats.ms(e - s);
                    }
                }
            }
            // etcd requests of one lock+unlock each way (separate short pass)
            int n = 50;
            io.disco.testing.RpcCounter.Snapshot c0 = bench.counter.snapshot();
            for (int i = 0; i < n; i++) {
                FencedLock lock = disco.lock(name);
                lock.lock();
                lock.unlock();
            }
            io.disco.testing.RpcCounter.Snapshot c1 = bench.counter.snapshot();
            for (int i = 0; i < n; i++) {
                service.lock();
                service.unlock();
            }
            io.disco.testing.RpcCounter.Snapshot c2 = bench.counter.snapshot();
            double clientRpcs = (c1.minus(c0).calls("KV/") + c1.minus(c0).watchCreates()) / (double) n;
            double serviceRpcs = (c2.minus(c1).calls("KV/") + c2.minus(c1).watchCreates()) / (double) n;
            double client = Stats.median(samples[0]);
            double direct = Stats.median(samples[1]);
            double ratio = client / direct;
            bench.report.row("client", "lock+unlock via disco.lock(name)", client, Stats.p99(samples[0]), "ms", "vs_service", ratio,
                    "etcd_rpcs", clientRpcs);
            bench.report.row("client", "lock+unlock via LockService", direct, Stats.p99(samples[1]), "ms", "etcd_rpcs", serviceRpcs);
            bench.report.target("disco.lock(name) lock+unlock vs LockService", "median <= 1.05 x",
                    String.format(Locale.ROOT, "%.3f x (%.3f ms vs %.3f ms)", ratio, client, direct), ratio <= 1.05,
                    ratio <= 1.05 ? "" : "the client makes and closes the name's service on every first lock and last unlock");
        } finally {
            session.close();
        }
    }
}
