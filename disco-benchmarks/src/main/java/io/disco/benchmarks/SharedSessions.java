package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.RpcCounter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Case "sessions" (section 6): 1,000 lock services on one shared session against 100 services with a
 * session each (TTL 3 s): leases granted, keepalives per second over a window, heap per idle service.
 * Target: the services of one session renew like one.
 */
final class SharedSessions implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        long windowMs = bench.quick ? 6_000 : 15_000;
        EtcdOptions opts = EtcdOptions.builder().ttl(ttl).build();
        log(
                "6. sessions: 1000 services on one session, 100 services with a session each; TTL %d s, window %.0f s",
                ttl.toSeconds(), windowMs / 1e3);

        // A: 1000 services on one shared session
        int nA = 1000;
        List<LockService> svcA = new ArrayList<>();
        long heap0 = Bench.usedHeap();
        RpcCounter.Snapshot a0 = bench.counter.snapshot();
        EtcdSession shared = EtcdSession.open(bench.client, opts);
        double rateA;
        long grantsA;
        double heapA;
        try {
            for (int i = 0; i < nA; i++) {
                svcA.add(shared.newLock(bench.root + "/s/shared/" + i));
            }
            grantsA = bench.counter.snapshot().minus(a0).calls("Lease/LeaseGrant");
            heapA = (Bench.usedHeap() - heap0) / (double) nA;
            rateA = bench.keepalivesPerSecond(windowMs);
        } finally {
            closeAll(svcA);
            shared.close();
        }

        // B: 100 services, one session each
        int nB = 100;
        List<LockService> svcB = new ArrayList<>();
        long heap1 = Bench.usedHeap();
        RpcCounter.Snapshot b0 = bench.counter.snapshot();
        double rateB;
        long grantsB;
        double heapB;
        try {
            for (int i = 0; i < nB; i++) {
                svcB.add(EtcdProvider.newLock(bench.client, bench.root + "/s/own/" + i, opts));
            }
            grantsB = bench.counter.snapshot().minus(b0).calls("Lease/LeaseGrant");
            heapB = (Bench.usedHeap() - heap1) / (double) nB;
            rateB = bench.keepalivesPerSecond(windowMs);
        } finally {
            closeAll(svcB);
        }

        bench.report.row(
                "6 sessions",
                "1000 services, 1 shared session",
                Double.NaN,
                Double.NaN,
                "",
                "leases",
                grantsA,
                "keepalives_per_s",
                rateA,
                "heap_bytes_per_service",
                heapA);
        bench.report.row(
                "6 sessions",
                "100 services, 1 session each",
                Double.NaN,
                Double.NaN,
                "",
                "leases",
                grantsB,
                "keepalives_per_s",
                rateB,
                "heap_bytes_per_service",
                heapB);
        double perSessionB = rateB / nB;
        boolean independent = grantsA == 1 && rateA <= perSessionB * 1.5 + 0.2;
        bench.report.target(
                "keepalives vs services on one session",
                "1000 services renew like one (1 lease, ~3/TTL per s)",
                String.format(
                        Locale.ROOT,
                        "1000 services on 1 session: %d lease, %.2f keepalives/s;"
                                + " one session of 1 service: %.2f/s (100 sessions: %.1f/s)",
                        grantsA,
                        rateA,
                        perSessionB,
                        rateB),
                independent,
                independent ? "" : "see keepalives_per_s above");
    }

    private static void closeAll(Collection<LockService> services) {
        for (LockService s : services) {
            s.close();
        }
    }
}
