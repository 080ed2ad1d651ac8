package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.benchmarks.Contention.Owner;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.semaphore.SemaphoreService;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Case "semaphore" (section 2): semaphore hand-overs, etcd requests per acquisition as the limit
 * (1, 2, 4) and the number of owners (8, 32) grow, with the contended run of {@link Contention}.
 */
final class SemaphoreHandover implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        log("2. semaphore: limit 1, 2, 4 with 8 and 32 owners");
        List<String> text = new ArrayList<>();
        for (int limit : new int[] {1, 2, 4}) {
            for (int k : new int[] {8, 32}) {
                String prefix = bench.root + "/s/sem-" + limit + "-" + k;
                Contention.Result c = Contention.measure(bench.counter, bench.quick, k, () -> {
                    EtcdSession s = EtcdSession.open(bench.client, EtcdOptions.defaults());
                    SemaphoreService sem = s.newSemaphore(prefix, limit);
                    return new Owner(sem::acquire, sem::release, s);
                });
                double rpa = c.requestsPerAcquisition();
                text.add(String.format(Locale.ROOT, "limit %d, %d owners: %.2f", limit, k, rpa));
                bench.report.row(
                        "2 semaphore",
                        "limit=" + limit + " K=" + k,
                        Double.NaN,
                        Double.NaN,
                        "",
                        "acq_per_s",
                        c.perSecond(),
                        c.requestFigures(),
                        "acquisitions",
                        c.acquisitions());
            }
        }
        bench.report.notes.add(
                "semaphore etcd requests per acquisition (a waiter counts down the names of the keys ahead as their"
                        + " deletes come, with no re-count; with limit 1 a waiter more than 4 places back watches its horizon"
                        + " first, then the queue, and reads once; a permit adds the slot read and claim Txns and the slot"
                        + " delete): " + String.join(", ", text));
    }
}
