package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Case "election" (section 4): failover, median over N terms: from the leader's {@code resign()}
 * returning, and from its lease being revoked (a lease loss at a known instant), to the next
 * candidate's {@code campaign()} returning.
 */
final class ElectionFailover implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        int n = bench.quick ? 8 : 20;
        log("4. election failover: resign -> next leader, lease loss -> next leader, %d terms each", n);
        for (boolean loss : new boolean[] {false, true}) {
            String prefix = bench.root + "/election/" + (loss ? "loss" : "resign");
            List<Double> ms = new ArrayList<>();
            EtcdSession leaderSession = EtcdSession.open(bench.client, EtcdOptions.defaults());
            io.disco.election.ElectionService leader = leaderSession.newElection(prefix);
            leader.campaign("leader-0");
            try {
                for (int i = 1; i <= n; i++) {
                    EtcdSession nextSession = EtcdSession.open(bench.client, EtcdOptions.defaults());
                    io.disco.election.ElectionService next = nextSession.newElection(prefix);
                    java.util.concurrent.CompletableFuture<Long> won =
                            java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                                try {
                                    next.campaign("leader-" + System.nanoTime());
                                    return System.nanoTime();
                                } catch (InterruptedException e) {
                                    throw new IllegalStateException(e);
                                }
                            });
                    // The next candidate must be queued (its key written) before the term ends.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (bench.keysUnder(prefix, 5) < 2) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("candidate did not queue");
                        }
                        Thread.onSpinWait();
                    }
                    long ended;
                    if (loss) {
                        ended = System.nanoTime();
                        bench.client
                                .getLeaseClient()
                                .revoke(leaderSession.leaseId())
                                .get(10, TimeUnit.SECONDS);
                    } else {
                        leader.resign();
                        ended = System.nanoTime();
                    }
                    ms.add((won.get(30, TimeUnit.SECONDS) - ended) / 1e6);
                    leaderSession.close();
                    leaderSession = nextSession;
                    leader = next;
                }
            } finally {
                leaderSession.close();
            }
            double[] samples = ms.stream().mapToDouble(Double::doubleValue).toArray();
            bench.report.samples(
                    "4 election",
                    loss ? "lease loss (revoke) -> next leader" : "resign() -> next leader",
                    samples,
                    "terms",
                    n);
        }
    }
}
