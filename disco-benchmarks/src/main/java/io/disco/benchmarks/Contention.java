package io.disco.benchmarks;

import io.disco.testservers.RpcCounter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The contended run that the cases "contended", "contended-jetcd", "semaphore" and "zookeeper" share: K
 * owners, each with a session (lease, client) of its own, on threads of their own repeat acquire, release
 * as fast as they can; measured are the handoffs (the next owner's acquisition returning after the
 * previous owner's release returned), the release calls, the throughput and the etcd requests. A case
 * gives only how one owner is opened, acquires and releases ({@link Owners}); {@link #measure} opens K of
 * them, warms up, runs and closes them.
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

    /** The measured result of one contended run. */
    record Result(
            int k, int acquisitions, double seconds, double[] handoffMs, double[] holdMs, RpcCounter.Snapshot rpcs) {

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
        List<Owner> opened = new ArrayList<>();
        try {
            for (int i = 0; i < k; i++) {
                opened.add(owners.open());
            }
            run(counter, opened.subList(0, 1), 5);
            return run(counter, opened, cyclesPerOwner(quick, k));
        } finally {
            for (Owner o : opened) {
                o.resources().close();
            }
        }
    }

    /**
     * Runs {@code owners}, each on a thread of its own, {@code cycles} acquire-release cycles each,
     * started together; the etcd requests of the run are counted by {@code counter}.
     */
    private static Result run(RpcCounter counter, List<Owner> owners, int cycles) throws Exception {
        int k = owners.size();
        int total = k * cycles;
        long[] granted = new long[total];
        long[] released = new long[total];
        AtomicInteger seq = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (Owner o : owners) {
            Thread t = new Thread(
                    () -> {
                        try {
                            start.await();
                            for (int c = 0; c < cycles; c++) {
                                o.lock().run();
                                long g = System.nanoTime();
                                int s = seq.getAndIncrement(); // under the lock: acquisitions are numbered in
                                // grant order
                                granted[s] = g;
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
        if (failure.get() != null) {
            throw new IllegalStateException("contended run failed", failure.get());
        }
        double[] handoff = new double[total - 1];
        for (int s = 0; s + 1 < total; s++) {
            handoff[s] = Stats.ms(granted[s + 1] - released[s]);
        }
        double[] hold = new double[total];
        for (int s = 0; s < total; s++) {
            hold[s] = Stats.ms(released[s] - granted[s]); // the unlock call: nothing is done while held
        }
        return new Result(k, total, (t1 - t0) / 1e9, handoff, hold, rpcs);
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
