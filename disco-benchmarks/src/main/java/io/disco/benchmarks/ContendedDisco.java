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
    /** disco's hand-offs (ms) by K, for the comparison with jetcd's. */
    final Map<Integer, double[]> handoffMs = new TreeMap<>();

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
            handoffMs.put(k, c.handoffMs());
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
                                + " acquisition waits: create Txn (which names the keys ahead), a watch (of the queue when"
                                + " at most 4 are ahead, else of the key 4 places ahead, then of the queue), a re-read of"
                                + " the keys ahead when the queue moved between the create and the watch's start, delete"
                                + " Txn (%.2f at K=4); no read after the delete that admits",
                        rpcsAtWait));
        double worst = perAcq.size() > 1 ? max : Double.NaN;
        bench.report.target(
                "etcd requests per contended acquisition",
                "<= 4.0 from K=4 to K=64",
                String.join(", ", perAcqText),
                worst <= 4.0,
                "unary requests plus watch creates per acquisition, the own-key watch reused across acquisitions;"
                        + " the token of a waited hold is recorded in its key (one Put, for EtcdSession.claimants) only"
                        + " once the hold has lasted 50 ms, so none of these holds (released at once) records it;"
                        + " a waiter further back than 4 sends a second watch and a read before its turn");
    }
}
