package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.redis.RedisProvider;
import io.disco.provider.zookeeper.ZooKeeperProvider;
import io.disco.testservers.RedisServer;
import io.disco.testservers.ZooKeeperServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;

/**
 * Case "barrier" (section B, issue 50): what a barrier costs on each backend, called as users call it (the client's
 * {@code disco.barrier(name)} and {@code disco.doubleBarrier(name, n)}), every participant a client (a session) of
 * its own, a new name every round:
 *
 * <ul>
 *   <li>a double-barrier round: {@value #PARTICIPANTS} participants enter and leave; its time runs from the start of
 *       the first {@code enter} to the return of the last {@code leave};
 *   <li>a barrier's release: {@value #WAITERS} waiters blocked in {@code await}; its time runs from the holder's
 *       {@code release()} call to the return of the last {@code await}.
 * </ul>
 *
 * <p>On etcd (the run's member), on an in-process ZooKeeper ({@link ZooKeeperServer}) side by side with Curator's
 * {@code DistributedDoubleBarrier} and {@code DistributedBarrier} on the same server (round after round, each
 * participant a Curator client of its own), and on a throwaway Redis ({@link RedisServer}; a note if none starts).
 * No target: the issue sets none; the rows give medians, p99 and, on ZooKeeper, the ratio to Curator's.
 */
final class BarrierCost implements BenchCase {

    static final int PARTICIPANTS = 3;
    static final int WAITERS = 16;
    /** The bound of every enter, leave and await: a hang fails the case instead of stalling the run. */
    private static final Duration BOUND = Duration.ofSeconds(30);
    /**
     * How long the waiters are given to block in {@code await} before the release: the API shows no sign that a
     * waiter's watch is in place, and a waiter that arrives after the release returns at once (a shorter sample).
     */
    private static final long SETTLE_MS = 100;

    private static final String SECTION = "B barrier";

    /** A participant's step in a round: enter and leave a double barrier, or await a barrier. */
    private interface Step {
        void run(String name) throws Exception;
    }

    /** The clients of one contestant on one backend: a holder and the participants, each with its own session. */
    private record Contestant(String label, Step holdUp, Step release, List<Step> entrants, List<Step> waiters) {}

    private Bench bench;
    private ExecutorService pool;

    @Override
    public void run(Bench bench) throws Exception {
        this.bench = bench;
        int warm = bench.quick ? 2 : 5;
        int rounds = bench.quick ? 8 : 40;
        log(
                "B. barriers: a double-barrier round of %d participants and a release to %d waiters, %d warm-up + %d"
                        + " rounds, on etcd, ZooKeeper (beside Curator's) and Redis",
                PARTICIPANTS, WAITERS, warm, rounds);
        pool = Executors.newFixedThreadPool(WAITERS + PARTICIPANTS);
        List<AutoCloseable> open = new ArrayList<>();
        try {
            Contestant etcd = disco("etcd", () -> EtcdProvider.disco(bench.client, EtcdOptions.defaults()), open);
            report("etcd", measure(etcd, null, warm, rounds));
            closeAll(open);
            try (ZooKeeperServer zk = ZooKeeperServer.start()) {
                String cs = zk.connectString();
                Contestant disco = disco(
                        "zookeeper",
                        () -> {
                            CuratorFramework cf = ZooKeeperVsCurator.client(cs);
                            open.add(cf);
                            return ZooKeeperProvider.disco(cf, ZooKeeperVsCurator.options());
                        },
                        open);
                Contestant curator = curator(cs, open);
                double[][][] both = measure(disco, curator, warm, rounds);
                report("zookeeper", both);
                closeAll(open);
            }
            RedisServer redis;
            try {
                redis = RedisServer.start();
            } catch (IllegalStateException e) {
                log("B. Redis: not measured: %s", e.getMessage());
                bench.report.notes.add(
                        "Barriers on Redis (section B): not measured, no redis-server: " + e.getMessage());
                return;
            }
            try (RedisServer server = redis) {
                Contestant disco = disco(
                        "redis",
                        () -> {
                            RedisClient client = RedisClient.create();
                            open.add(client::shutdown);
                            return RedisProvider.disco(client, RedisURI.create(server.uri()), RedisOptions.defaults());
                        },
                        open);
                report("redis", measure(disco, null, warm, rounds));
                closeAll(open);
            }
        } finally {
            closeAll(open);
            pool.shutdownNow();
        }
    }

    /** A client factory; what it opens besides the {@code Disco} it adds to the list to close. */
    private interface Clients {
        Disco open() throws Exception;
    }

    /** disco's contestant on one backend: every holder, entrant and waiter a {@code Disco} of its own. */
    private Contestant disco(String backend, Clients clients, List<AutoCloseable> open) throws Exception {
        Disco holder = opened(clients, open);
        List<Step> entrants = new ArrayList<>();
        for (int i = 0; i < PARTICIPANTS; i++) {
            Disco d = opened(clients, open);
            entrants.add(name -> {
                DoubleBarrier b = d.doubleBarrier(name, PARTICIPANTS);
                if (!b.enter(BOUND) || !b.leave(BOUND)) {
                    throw new IllegalStateException("a double barrier of " + backend + " took over " + BOUND);
                }
            });
        }
        List<Step> waiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            Disco d = opened(clients, open);
            waiters.add(name -> {
                if (!d.barrier(name).await(BOUND)) {
                    throw new IllegalStateException("a barrier of " + backend + " stayed up over " + BOUND);
                }
            });
        }
        return new Contestant(
                "disco",
                name -> holder.barrier(name).hold(),
                name -> holder.barrier(name).release(),
                entrants,
                waiters);
    }

    private static Disco opened(Clients clients, List<AutoCloseable> open) throws Exception {
        Disco d = clients.open();
        open.add(d);
        return d;
    }

    /** Curator's {@code DistributedDoubleBarrier} and {@code DistributedBarrier}, each participant a client of its own. */
    private static Contestant curator(String connectString, List<AutoCloseable> open) {
        CuratorFramework holderClient = ZooKeeperVsCurator.client(connectString);
        open.add(holderClient);
        List<Step> entrants = new ArrayList<>();
        for (int i = 0; i < PARTICIPANTS; i++) {
            CuratorFramework cf = ZooKeeperVsCurator.client(connectString);
            open.add(cf);
            entrants.add(name -> {
                DistributedDoubleBarrier b = new DistributedDoubleBarrier(cf, name, PARTICIPANTS);
                if (!b.enter(BOUND.toMillis(), TimeUnit.MILLISECONDS)
                        || !b.leave(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("a Curator double barrier took over " + BOUND);
                }
            });
        }
        List<Step> waiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            CuratorFramework cf = ZooKeeperVsCurator.client(connectString);
            open.add(cf);
            waiters.add(name -> {
                if (!new DistributedBarrier(cf, name).waitOnBarrier(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("a Curator barrier stayed up over " + BOUND);
                }
            });
        }
        return new Contestant(
                "Curator",
                name -> new DistributedBarrier(holderClient, name).setBarrier(),
                name -> new DistributedBarrier(holderClient, name).removeBarrier(),
                entrants,
                waiters);
    }

    /**
     * @return {@code [contestant][0: double-barrier rounds, 1: releases][round]} in milliseconds; the second contestant
     *     (may be null) measured in turn with the first, round after round
     */
    private double[][][] measure(Contestant first, Contestant second, int warm, int rounds) throws Exception {
        List<Contestant> all = second == null ? List.of(first) : List.of(first, second);
        String root = bench.root + "/barrier-" + System.nanoTime();
        AtomicInteger round = new AtomicInteger();
        List<Interleaved.Sampled> doubles = new ArrayList<>();
        List<Interleaved.Sampled> releases = new ArrayList<>();
        for (Contestant c : all) {
            String prefix = root + "/" + c.label().toLowerCase(Locale.ROOT);
            doubles.add(() -> doubleRound(c, prefix + "/d" + round.incrementAndGet()));
            releases.add(() -> releaseRound(c, prefix + "/b" + round.incrementAndGet()));
        }
        double[][] d = Interleaved.sampledInTurn(warm, rounds, doubles.toArray(Interleaved.Sampled[]::new));
        double[][] r = Interleaved.sampledInTurn(warm, rounds, releases.toArray(Interleaved.Sampled[]::new));
        double[][][] out = new double[all.size()][][];
        for (int i = 0; i < all.size(); i++) {
            out[i] = new double[][] {d[i], r[i]};
        }
        return out;
    }

    /** One double-barrier round on a new name: every entrant enters and leaves; from the first start to the last end. */
    private double doubleRound(Contestant c, String name) throws Exception {
        List<Callable<Long>> steps = new ArrayList<>();
        for (Step s : c.entrants()) {
            steps.add(() -> {
                s.run(name);
                return System.nanoTime();
            });
        }
        long start = System.nanoTime();
        long last = lastOf(submitAll(steps));
        return Stats.ms(last - start);
    }

    /** One release on a new name: held, the waiters block, released; from the release call to the last return. */
    private double releaseRound(Contestant c, String name) throws Exception {
        c.holdUp().run(name);
        List<Callable<Long>> steps = new ArrayList<>();
        for (Step s : c.waiters()) {
            steps.add(() -> {
                s.run(name);
                return System.nanoTime();
            });
        }
        List<Future<Long>> waiting = submitAll(steps);
        Thread.sleep(SETTLE_MS); // the waiters block (see SETTLE_MS): no event says that they do
        long start = System.nanoTime();
        c.release().run(name);
        return Stats.ms(lastOf(waiting) - start);
    }

    private List<Future<Long>> submitAll(List<Callable<Long>> steps) {
        List<Future<Long>> futures = new ArrayList<>();
        for (Callable<Long> s : steps) {
            futures.add(pool.submit(s));
        }
        return futures;
    }

    private static long lastOf(List<Future<Long>> futures) throws Exception {
        long last = Long.MIN_VALUE;
        for (Future<Long> f : futures) {
            last = Math.max(last, f.get(2 * BOUND.toSeconds(), TimeUnit.SECONDS));
        }
        return last;
    }

    /**
     * The rows of one backend: for each measure, disco's samples and, when measured beside Curator's, the ratio of the
     * medians and Curator's row.
     */
    private void report(String backend, double[][][] samples) {
        String[] measures = {
            "double barrier, " + PARTICIPANTS + " enter+leave", "barrier release to " + WAITERS + " waiters"
        };
        String[] curators = {"DistributedDoubleBarrier", "DistributedBarrier"};
        for (int m = 0; m < measures.length; m++) {
            double[] disco = samples[0][m];
            String row = backend + ": " + measures[m];
            if (samples.length == 1) {
                bench.report.samples(SECTION, row, disco);
                continue;
            }
            double[] curator = samples[1][m];
            bench.report.samples(SECTION, row, disco, "vs_curator", Stats.median(disco) / Stats.median(curator));
            bench.report.samples(SECTION, backend + ": Curator " + curators[m] + ", same", curator);
        }
    }

    private static void closeAll(List<AutoCloseable> open) {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                log("B. closing %s: %s", open.get(i), e);
            }
        }
        open.clear();
    }
}
