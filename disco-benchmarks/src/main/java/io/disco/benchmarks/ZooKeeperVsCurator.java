package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.benchmarks.Contention.Owner;
import io.disco.lock.LockService;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.testservers.RpcCounter;
import io.disco.testservers.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;

/**
 * Case "zookeeper" (section Z): disco's ZooKeeper lock side by side with Curator's own {@code InterProcessMutex}
 * on the same server, an in-process one-member ZooKeeper ({@link ZooKeeperServer}: Curator's
 * {@code TestingServer} in this JVM, its log not fsynced, as the etcd of the other cases runs with
 * {@code --unsafe-no-fsync}). Every owner, disco's or Curator's, is a client (a ZooKeeper session) of its own.
 * Measured: one uncontended acquire+release, interleaved round by round (disco's adds the check of its node's
 * ephemeral owner, its token is the node's czxid from the create's stat), and contended hand-offs at K = 4 and
 * 64 owners ({@link Contention}); each row gives the disco/Curator ratio of the medians.
 */
final class ZooKeeperVsCurator implements BenchCase {

    private static final int[] OWNERS = {4, 64};

    @Override
    public void run(Bench bench) throws Exception {
        try (ZooKeeperServer zk = ZooKeeperServer.start()) {
            log("Z. ZooKeeper: disco vs Curator's InterProcessMutex on %s", zk);
            bench.report.meta.put("zookeeper", zk.toString());
            uncontended(bench, zk.connectString());
            contended(bench, zk.connectString());
        }
    }

    /** A started Curator client of {@code connectString}, as every ZooKeeper owner of the benchmark uses. */
    static CuratorFramework client(String connectString) {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryNTimes(3, 100))
                .build();
        c.start();
        return c;
    }

    static ZooKeeperOptions options() {
        return ZooKeeperOptions.builder()
                .connectTimeout(Duration.ofSeconds(10))
                .requestTimeout(Duration.ofSeconds(10))
                .build();
    }

    private void uncontended(Bench bench, String connectString) throws Exception {
        int warm = bench.quick ? 60 : 500;
        int rounds = bench.quick ? 200 : 2000;
        log("Z1. uncontended acquire+release: %d warm-up + %d interleaved rounds of disco and Curator", warm, rounds);
        String root = "/disco-bench/zk-u-" + bench.root.substring(bench.root.lastIndexOf('/') + 1);
        try (CuratorFramework discoClient = client(connectString);
                CuratorFramework curatorClient = client(connectString);
                ZooKeeperSession session = ZooKeeperSession.open(discoClient, options());
                LockService disco = session.newLock(root + "/disco")) {
            InterProcessMutex curator = new InterProcessMutex(curatorClient, root + "/curator");
            long p0 = ZooKeeperPackets.received();
            for (int i = 0; i < 200; i++) {
                disco.lock();
                disco.unlock();
            }
            long p1 = ZooKeeperPackets.received();
            for (int i = 0; i < 200; i++) {
                curator.acquire();
                curator.release();
            }
            double discoRequests = (p1 - p0) / 200.0;
            double curatorRequests = (ZooKeeperPackets.received() - p1) / 200.0;
            double[][] samples = Interleaved.inTurn(
                    warm,
                    rounds,
                    () -> {
                        disco.lock();
                        disco.unlock();
                    },
                    () -> {
                        curator.acquire();
                        curator.release();
                    });
            double disc = Stats.median(samples[0]);
            double cur = Stats.median(samples[1]);
            bench.report.row(
                    "Z zookeeper",
                    "disco lock+unlock",
                    disc,
                    Stats.p99(samples[0]),
                    "ms",
                    "vs_curator",
                    disc / cur,
                    "requests",
                    discoRequests);
            bench.report.row(
                    "Z zookeeper",
                    "Curator InterProcessMutex acquire+release",
                    cur,
                    Stats.p99(samples[1]),
                    "ms",
                    "requests",
                    curatorRequests);
            bench.report.target(
                    "ZooKeeper: uncontended lock+unlock, disco vs Curator InterProcessMutex",
                    "<= 1.1 x at the median",
                    String.format(Locale.ROOT, "%.2f x (%.3f vs %.3f ms)", disc / cur, disc, cur),
                    disc <= 1.1 * cur,
                    String.format(
                            Locale.ROOT,
                            "%.1f requests per lock+unlock against Curator's %.1f (the server's own count): the watch on"
                                    + " the held node, by which its deletion by anybody else is the loss (Curator does not"
                                    + " notice it), and the release, a multi-op transaction against a plain delete; the"
                                    + " acquisition runs on the session's worker thread (QueueWorker), a thread hop each way",
                            discoRequests,
                            curatorRequests));
        }
    }

    private void contended(Bench bench, String connectString) throws Exception {
        RpcCounter none = new RpcCounter(); // ZooKeeper's requests are not counted: the snapshots stay empty
        String root = "/disco-bench/zk-c-" + bench.root.substring(bench.root.lastIndexOf('/') + 1);
        List<String> ratios = new ArrayList<>();
        List<String> throughput = new ArrayList<>();
        List<String> requests = new ArrayList<>();
        boolean ahead = true;
        for (int k : OWNERS) {
            log("Z2. contended hand-offs, K = %d owners: disco, then Curator", k);
            String discoName = root + "/disco-" + k;
            ZooKeeperPackets discoPackets = new ZooKeeperPackets();
            Contention.Result d = Contention.measure(
                    none,
                    bench.quick,
                    k,
                    () -> {
                        CuratorFramework cf = client(connectString);
                        ZooKeeperSession s = ZooKeeperSession.open(cf, options());
                        LockService svc = s.newLock(discoName);
                        return new Owner(svc::lock, svc::unlock, () -> {
                            s.close();
                            cf.close();
                        });
                    },
                    discoPackets);
            String curatorName = root + "/curator-" + k;
            ZooKeeperPackets curatorPackets = new ZooKeeperPackets();
            Contention.Result c = Contention.measure(
                    none,
                    bench.quick,
                    k,
                    () -> {
                        CuratorFramework cf = client(connectString);
                        InterProcessMutex m = new InterProcessMutex(cf, curatorName);
                        return new Owner(
                                () -> {
                                    if (!m.acquire(3, TimeUnit.MINUTES)) {
                                        throw new IllegalStateException(
                                                "InterProcessMutex: not acquired within 3 minutes");
                                    }
                                },
                                m::release,
                                cf);
                    },
                    curatorPackets);
            double dh = Stats.median(d.handoffMs());
            double ch = Stats.median(c.handoffMs());
            bench.report.row(
                    "Z zookeeper",
                    "K=" + k + " handoff, disco",
                    dh,
                    Stats.p99(d.handoffMs()),
                    "ms",
                    "vs_curator",
                    dh / ch,
                    "acq_per_s",
                    d.perSecond(),
                    "unlock_ms",
                    Stats.median(d.holdMs()),
                    "requests",
                    discoPackets.perAcquisition(d),
                    "acquisitions",
                    d.acquisitions());
            c.reportHandoffs(
                    bench.report,
                    "Z zookeeper",
                    "K=" + k + " handoff, Curator InterProcessMutex",
                    "release_ms",
                    "requests",
                    curatorPackets.perAcquisition(c));
            requests.add(String.format(
                    Locale.ROOT,
                    "K=%d %.1f vs %.1f",
                    k,
                    discoPackets.perAcquisition(d),
                    curatorPackets.perAcquisition(c)));
            ratios.add(String.format(Locale.ROOT, "K=%d %.2f x", k, dh / ch));
            throughput.add(String.format(
                    Locale.ROOT,
                    "K=%d: %.2f (%.0f vs %.0f/s)",
                    k,
                    d.perSecond() / c.perSecond(),
                    d.perSecond(),
                    c.perSecond()));
            ahead &= d.perSecond() >= c.perSecond();
        }
        bench.report.target(
                "ZooKeeper: contended acquisitions/s, disco vs Curator InterProcessMutex",
                ">= 1.0 x at every K",
                String.join(", ", throughput),
                ahead,
                "requests per acquisition, disco vs Curator (the server's own count): " + String.join(", ", requests)
                        + "; a waiting disco acquisition also watches its own node (its deletion fails the wait at"
                        + " once) and the held node, and releases with a multi-op transaction; it runs on the"
                        + " session's worker thread, so a hand-off wakes the waiter's worker, then the caller");
        bench.report.notes.add(
                "ZooKeeper (section Z): an in-process one-member server in the benchmark's JVM, log not fsynced;"
                        + " each owner a client and session of its own; contended hand-off medians disco/Curator: "
                        + String.join(", ", ratios));
    }
}
