package io.disco.benchmarks;

import java.util.List;

/**
 * One case of {@code ./bench}: what it measures, in its own file, written into the run's {@link
 * Report} (rows, targets with met or missed, notes). {@link #all()} is the registry: a new case goes
 * there, at the place in the order where it should run, with its {@code --only} name and whether it
 * uses etcd ({@link Listed}).
 */
interface BenchCase {

    /**
     * @return every case, new for each run, in the order they run (those that use etcd run first, on
     *     its one client; the others after it is stopped)
     */
    static List<Listed> all() {
        ContendedDisco contended = new ContendedDisco();
        return List.of(
                onEtcd("uncontended", new Uncontended()),
                onEtcd("contended", contended),
                onEtcd("contended-jetcd", new ContendedJetcd(contended)),
                onEtcd("semaphore", new SemaphoreHandover()),
                onEtcd("watch-delivery", new WatchDelivery()),
                onEtcd("rwlock", new RWLockThroughput()),
                onEtcd("election", new ElectionFailover()),
                onEtcd("sessions", new SharedSessions()),
                onEtcd("many-locks", new ManyLocksAtOnce()),
                onEtcd("scale", new ScaleOfOneSession()),
                onEtcd("client-lock", new ClientVsService()),
                onEtcd("client-parallel", new ClientParallelNames()),
                onEtcd("client-handoff", new ClientHandoff()),
                onEtcd("client-names", new ClientManyNames()),
                onEtcd("barrier", new BarrierCost()),
                withoutEtcd("zookeeper", new ZooKeeperVsCurator()),
                withoutEtcd("redis", new RedisVsLockRegistry()),
                onEtcd("guard-flood", new GuardBoundFlood()),
                withoutEtcd("guard-filter", new GuardFilterOnJetty()),
                withoutEtcd("keyed-guard", new KeyedGuardMemory()),
                withoutEtcd("guard-jmh", new GuardBenchmark()));
    }

    /** Measures, and puts the figures into {@code bench.report}. */
    void run(Bench bench) throws Exception;

    /**
     * A case as the registry lists it.
     *
     * @param name the name given to {@code --only}
     * @param usesEtcd whether the case measures against the run's etcd ({@link Bench#client} and the rest):
     *     such a case runs while it is up, the others after it is stopped
     * @param measures the case
     */
    record Listed(String name, boolean usesEtcd, BenchCase measures) {}

    private static Listed onEtcd(String name, BenchCase measures) {
        return new Listed(name, true, measures);
    }

    private static Listed withoutEtcd(String name, BenchCase measures) {
        return new Listed(name, false, measures);
    }
}
