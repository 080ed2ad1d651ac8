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
    public void run(Bench bench) throws Exception {
        int warm = bench.quick ? 60 : 500;
        int rounds = bench.quick ? 300 : 2000;
        log("client-lock: %d warm-up + %d interleaved rounds, disco.lock(name) vs LockService", warm, rounds);
        EtcdSession session = EtcdSession.open(bench.client, EtcdOptions.defaults());
        try (Disco disco = EtcdProvider.disco(bench.client, EtcdOptions.defaults());
                LockService service = session.newLock(bench.root + "/cl/service")) {
            String name = bench.root + "/cl/client";
            Interleaved.Variant viaClient = () -> {
                FencedLock lock = disco.lock(name);
                lock.lock();
                lock.unlock();
            };
            Interleaved.Variant viaService = () -> {
                service.lock();
                service.unlock();
            };
            double[][] samples = Interleaved.inTurn(warm, rounds, viaClient, viaService);
            // etcd requests of one lock+unlock each way (separate short pass)
            double clientRpcs = EtcdRequests.perCall(bench.counter, 50, viaClient);
            double serviceRpcs = EtcdRequests.perCall(bench.counter, 50, viaService);
            double client = Stats.median(samples[0]);
            double direct = Stats.median(samples[1]);
            double ratio = client / direct;
            bench.report.row(
                    "client",
                    "lock+unlock via disco.lock(name)",
                    client,
                    Stats.p99(samples[0]),
                    "ms",
                    "vs_service",
                    ratio,
                    "etcd_rpcs",
                    clientRpcs);
            bench.report.row(
                    "client",
                    "lock+unlock via LockService",
                    direct,
                    Stats.p99(samples[1]),
                    "ms",
                    "etcd_rpcs",
                    serviceRpcs);
            bench.report.target(
                    "disco.lock(name) lock+unlock vs LockService",
                    "median <= 1.05 x",
                    String.format(Locale.ROOT, "%.3f x (%.3f ms vs %.3f ms)", ratio, client, direct),
                    ratio <= 1.05,
                    ratio <= 1.05
                            ? ""
                            : "the client makes and closes the name's service on every first lock and last unlock");
        } finally {
            session.close();
        }
    }
}
