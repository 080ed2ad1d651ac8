package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.benchmarks.Contention.Owner;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.semaphore.SemaphoreService;
import io.disco.testing.RpcCounter;
import io.etcd.jetcd.Client;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Case "semaphore" (section 2): semaphore hand-overs, etcd requests per acquisition as the limit
 * (1, 2, 4) and the number of owners (8, 32) grow, with the contended run of {@link Contention}.
 */
final class SemaphoreHandover implements BenchCase {

    @Override
    public String name() {
        return "semaphore";
    }

    @Override
    public void run(Bench bench) throws Exception {
        boolean quick = bench.quick;
        Client client = bench.client;
        String root = bench.root;
        Report report = bench.report;
        RpcCounter counter = bench.counter;
        log("2. semaphore: limit 1, 2, 4 with 8 and 32 owners");
        List<String> text = new ArrayList<>();
        for (int limit : new int[] {1, 2, 4}) {
            for (int k : new int[] {8, 32}) {
                List<EtcdSession> sessions = new ArrayList<>();
                List<Owner> owners = new ArrayList<>();
                String prefix = root + "/s/sem-" + limit + "-" + k;
                try {
                    for (int i = 0; i < k; i++) {
                        EtcdSession s = EtcdSession.open(client, EtcdOptions.defaults());
                        sessions.add(s);
                        SemaphoreService sem = s.newSemaphore(prefix, limit);
                        owners.add(new Owner() {
                            @Override
                            public void lock() throws Exception {
                                sem.acquire();
                            }

                            @Override
                            public void unlock() {
                                sem.release();
                            }
                        });
                    }
                    Contention.run(counter, owners.subList(0, 1), 5);
                    Contention.Result c = Contention.run(counter, owners, Contention.cyclesPerOwner(quick, k));
                    long kv = c.rpcs().calls("KV/");
                    double rpa = (kv + c.rpcs().watchCreates()) / (double) c.acquisitions();
                    text.add(String.format(Locale.ROOT, "limit %d, %d owners: %.2f", limit, k, rpa));
                    report.row("2 semaphore", "limit=" + limit + " K=" + k, Double.NaN, Double.NaN, "",
                            "acq_per_s", c.acquisitions() / c.seconds(), "rpcs_per_acq", rpa,
                            "kv_per_acq", kv / (double) c.acquisitions(),
                            "watches_per_acq", c.rpcs().watchCreates() / (double) c.acquisitions(),
                            "acquisitions", c.acquisitions());
                } finally {
                    sessions.forEach(EtcdSession::close);
                }
            }
        }
        report.notes.add("semaphore etcd requests per acquisition (the Go algorithm: with limit > 1 every delete under"
                + " the prefix makes every waiter re-count; a permit adds the slot read and claim Txns and the slot"
                + " delete): " + String.join(", ", text));
    }
}
