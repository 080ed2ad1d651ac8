package io.disco.benchmarks;

import io.disco.testservers.RpcCounter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The contended run that the cases "contended", "contended-jetcd", "semaphore", "zookeeper" and "redis" share: K
 * owners, each with a session (lease, client) of its own, on threads of their own repeat acquire, release
 * as fast as they can; measured are the handoffs (the next owner's acquisition returning after the
 * previous owner's release returned), the release calls, each acquisition's wait and which owner it went to,
 * the throughput and the etcd requests (a case on another server reads its own counters around the run,
 * {@link Window}). A case gives only how one owner is opened, acquires and releases ({@link Owners});
 * {@link #measure} opens K of them, warms up, runs and closes them.
 */
final class Contention {

    private Contention() {}

    /** Acquisitions per owner at {@code k} owners: about 600 in all (80 with {@code --quick}), at least 2 each. */
    static int cyclesPerOwner(boolean quick, int k) {
        int total = quick ? 80 : 600;
        return Math.max(2, (total + k - 1) / k);
    }

    /** The numbers of owners K the contended cases measure. */
    static final int[] OWNERS = {1, 4, 16, 64};

    /**
     * One owner: its acquire and release, as measured ({@code lock} returns when held, {@code unlock} when
     * released), and what it holds of its own (its session, lease or client), closed after the run.
     */
    record Owner(Step lock, Step unlock, AutoCloseable resources) {}

    /** An owner's acquire or release. */
    interface Step {
        void run() throws Exception;
    }

    /** Opens the next owner of a run, with a session (lease, client) of its own. */
    interface Owners {
        Owner open() throws Exception;
    }

    /**
     * Told when the measured run starts and ends (every owner open, the warm-up done; the owners' threads
     * started and joined): for a case that reads counters of its own server around the run.
     */
    interface Window {
        Window NONE = new Window() {};

        /** Just before the owners are let go. */
        default void started() throws Exception {}

        /** Just after every owner finished. */
        default void ended() throws Exception {}
    }

    /**
     * The measured result of one contended run; the arrays {@code holdMs}, {@code waitMs} and {@code holders} are by
     * acquisition in grant order, {@code handoffMs} by pair of consecutive acquisitions.
     *
     * @param waitMs each {@code lock()} call, from its start to its return
     * @param holders the owner (0 to k - 1, in the order opened) each acquisition went to
     */
    record Result(
            int k,
            int acquisitions,
            double seconds,
            double[] handoffMs,
            double[] holdMs,
            double[] waitMs,
            int[] holders,
            RpcCounter.Snapshot rpcs) {

        /**
         * @return the share of acquisitions (after the first) that went to another owner than the one before: near 1
         *     for a first-come-first-served queue, lower where the releasing owner takes the lock again at once
         */
        double toAnotherOwner() {
            int changes = 0;
            for (int s = 1; s < holders.length; s++) {
                if (holders[s] != holders[s - 1]) {
                    changes++;
                }
            }
            return holders.length < 2 ? Double.NaN : changes / (double) (holders.length - 1);
        }

        /** @return acquisitions per second */
        double perSecond() {
            return acquisitions / seconds;
        }

        /** @return the etcd requests per acquisition ({@link EtcdRequests}: KV calls and watch creates) */
        double requestsPerAcquisition() {
            return EtcdRequests.of(rpcs) / (double) acquisitions;
        }

        /** @return the KV calls per acquisition */
        double kvPerAcquisition() {
            return rpcs.calls("KV/") / (double) acquisitions;
        }

        /** @return the watch creates per acquisition */
        double watchesPerAcquisition() {
            return rpcs.watchCreates() / (double) acquisitions;
        }

        /** @return the etcd requests per acquisition as a row's figures: all, the KV calls, the watch creates */
        Object[] requestFigures() {
            return new Object[] {
                "rpcs_per_acq", requestsPerAcquisition(),
                "kv_per_acq", kvPerAcquisition(),
                "watches_per_acq", watchesPerAcquisition()
            };
        }

        /**
         * Reports this run as one row of {@code section}: the hand-offs' median and p99, the acquisitions per
         * second, the median release call as {@code releaseFigure}, then {@code more} (name, value, ...) and the
         * number of acquisitions.
         */
        void reportHandoffs(Report report, String section, String name, String releaseFigure, Object... more) {
            report.samples(
                    section,
                    name,
                    handoffMs,
                    "acq_per_s",
                    perSecond(),
                    releaseFigure,
                    Stats.median(holdMs),
                    more,
                    "acquisitions",
                    acquisitions);
        }
    }

    /**
     * Opens {@code k} owners with {@code owners}, warms up on the first alone (5 cycles on its fresh session),
     * then {@link #run runs} all of them, {@link #cyclesPerOwner} cycles each; closes the owners after, in the
     * order they were opened.
     */
    static Result measure(RpcCounter counter, boolean quick, int k, Owners owners) throws Exception {
        return measure(counter, quick, k, owners, Window.NONE);
    }

    /** {@link #measure(RpcCounter, boolean, int, Owners)}, telling {@code window} when the measured run starts and ends. */
    static Result measure(RpcCounter counter, boolean quick, int k, Owners owners, Window window) throws Exception {
        List<Owner> opened = new ArrayList<>();
        try {
            for (int i = 0; i < k; i++) {
                opened.add(owners.open());
            }
            run(counter, opened.subList(0, 1), 5, Window.NONE);
            return run(counter, opened, cyclesPerOwner(quick, k), window);
        } finally {
            for (Owner o : opened) {
                o.resources().close();
            }
        }
    }

    /**
     * Runs {@code owners}, each on a thread of its own, {@code cycles} acquire-release cycles each,
     * started together; the etcd requests of the run are counted by {@code counter}; {@code window} is told when
     * the owners are let go and when they all finished.
     */
    private static Result run(RpcCounter counter, List<Owner> owners, int cycles, Window window) throws Exception {
        int k = owners.size();
        int total = k * cycles;
        long[] granted = new long[total];
        long[] released = new long[total];
        long[] asked = new long[total];
        int[] holders = new int[total];
        AtomicInteger seq = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            Owner o = owners.get(i);
            int index = i;
            Thread t = new Thread(
                    () -> {
                        try {
                            start.await();
                            for (int c = 0; c < cycles; c++) {
                                long a = System.nanoTime();
                                o.lock().run();
                                long g = System.nanoTime();
                                int s = seq.getAndIncrement(); // under the lock: acquisitions are numbered in
                                // grant order
                                granted[s] = g;
                                asked[s] = a;
                                holders[s] = index;
                                o.unlock().run();
                                released[s] = System.nanoTime();
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-owner");
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        window.started();
        RpcCounter.Snapshot before = counter.snapshot();
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.MINUTES.toMillis(3));
            if (t.isAlive()) {
                throw new IllegalStateException("a contended owner did not finish within 3 minutes");
            }
        }
        long t1 = System.nanoTime();
        RpcCounter.Snapshot rpcs = counter.snapshot().minus(before);
        window.ended();
        if (failure.get() != null) {
            throw new IllegalStateException("contended run failed", failure.get());
        }
        double[] handoff = new double[total - 1];
        for (int s = 0; s + 1 < total; s++) {
            handoff[s] = Stats.ms(granted[s + 1] - released[s]);
        }
        double[] hold = new double[total];
        double[] wait = new double[total];
        for (int s = 0; s < total; s++) {
            hold[s] = Stats.ms(released[s] - granted[s]); // the unlock call: nothing is done while held
            wait[s] = Stats.ms(granted[s] - asked[s]);
        }
        return new Result(k, total, (t1 - t0) / 1e9, handoff, hold, wait, holders, rpcs);
    }

    /** @return how many of {@code samples} are above {@code limit} */
    static int over(double[] samples, double limit) {
        int n = 0;
        for (double v : samples) {
            if (v > limit) {
                n++;
            }
        }
        return n;
    }
}
