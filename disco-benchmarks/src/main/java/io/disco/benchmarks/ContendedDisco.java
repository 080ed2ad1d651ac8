package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.benchmarks.Contention.Owner;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Case "contended" (section 2): K = 1, 4, 16, 64 owners, a session each, contend for one disco lock
 * ({@link Contention}). Targets: etcd requests per handoff constant as the waiters grow, and at most
 * 4.5 per acquisition. Its acquisitions per second go to {@link ContendedJetcd}'s comparison.
 */
final class ContendedDisco implements BenchCase {

    /** Acquisitions per second by K, once run: compared with jetcd's by {@link ContendedJetcd}. */
    final Map<Integer, Double> acquisitionsPerSecond = new TreeMap<>();

    @Override
    public void run(Bench bench) throws Exception {
        log("2. contended handoff, disco: K = 1, 4, 16, 64 owners");
        EtcdOptions opts = EtcdOptions.defaults();
        List<Double> perAcq = new ArrayList<>();
        List<String> perAcqText = new ArrayList<>();
        double rpcsAtWait = Double.NaN;
        for (int k : Contention.OWNERS) {
            String prefix = bench.root + "/c/disco-" + k;
            Contention.Result c = Contention.measure(bench.counter, bench.quick, k, () -> {
                EtcdSession s = EtcdSession.open(bench.client, opts);
                LockService svc = s.newLock(prefix);
                return new Owner(svc::lock, svc::unlock, s);
            });
            double rpa = c.requestsPerAcquisition();
            perAcq.add(rpa);
            perAcqText.add(String.format(Locale.ROOT, "K=%d: %.2f", k, rpa));
            acquisitionsPerSecond.put(k, c.perSecond());
            c.reportHandoffs(
                    bench.report,
                    "2 contended disco",
                    "K=" + k + " handoff",
                    "unlock_ms",
                    c.requestFigures(),
                    "handoffs_over_50ms",
                    Contention.over(c.handoffMs(), 50));
            if (k == 4) {
                rpcsAtWait = rpa;
            }
        }
        // Constant from 4 to 64 owners (3 to 63 waiters); K = 1 has nobody to wait for.
        double min = Double.MAX_VALUE;
        double max = 0;
        for (int i = 1; i < perAcq.size(); i++) {
            min = Math.min(min, perAcq.get(i));
            max = Math.max(max, perAcq.get(i));
        }
        boolean flat = max <= min * 1.15;
        bench.report.target(
                "etcd RPCs per handoff vs waiters",
                "constant (max/min <= 1.15) from K=4 to K=64",
                String.join(", ", perAcqText),
                flat,
                String.format(
                        Locale.ROOT,
                        "K=1 acquires without waiting (create Txn + delete Txn); from K=4 on every"
                                + " acquisition waits: create Txn (which names the predecessor), a watch on it, one Txn"
                                + " reading the own key and the predecessors after its delete, delete Txn (%.2f at K=4)",
                        rpcsAtWait));
        double worst = perAcq.size() > 1 ? max : Double.NaN;
        bench.report.target(
                "etcd requests per contended acquisition",
                "<= 4.5 from K=4 to K=64",
                String.join(", ", perAcqText),
                worst <= 4.5,
                "unary requests plus watch creates per acquisition, the own-key watch reused across acquisitions;"
                        + " a waited acquisition also records its token in its key's value (one Put that nothing waits for,"
                        + " for EtcdSession.claimants), about 1.1 of the requests from K=4 on");
    }
}
