package io.disco.benchmarks;

import java.util.List;

/**
 * One case of {@code ./bench}: what it measures, in its own file, written into the run's {@link
 * Report} (rows, targets with met or missed, notes). {@link #all()} is the registry: a new case goes
 * there, at the place in the order where it should run. {@code --only} selects cases by {@link #name()}.
 */
interface BenchCase {

    /**
     * @return every case, new for each run, in the order they run (those that use etcd run first, on
     *     its one client; the others after it is stopped)
     */
    static List<BenchCase> all() {
        ContendedDisco contended = new ContendedDisco();
        return List.of(new Uncontended(), contended, new ContendedJetcd(contended), new SemaphoreHandover(),
                new WatchDelivery(), new RWLockThroughput(), new ElectionFailover(), new SharedSessions(),
                new ManyLocksAtOnce(), new ScaleOfOneSession(), new ClientVsService(), new ClientParallelNames(),
                new ClientHandoff(), new ClientManyNames(), new ZooKeeperVsCurator(), new GuardBoundFlood(),
                new GuardFilterOnJetty(), new KeyedGuardMemory(), new GuardBenchmark());
    }

    /** @return the name given to {@code --only} */
    String name();

    /**
     * @return whether the case measures against the run's etcd ({@link Bench#client} and the rest):
     *     such a case runs while it is up, the others after it is stopped
     */
    default boolean usesEtcd() {
        return true;
    }

    /** Measures, and puts the figures into {@code bench.report}. */
    void run(Bench bench) throws Exception;
}
