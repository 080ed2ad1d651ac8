package io.disco.benchmarks;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.RpcCounter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * One acquisition run of the scale case ({@link ScaleOfOneSession}): {@code lockAsync()} on every service of one
 * session, with at most a window in flight, all awaited together, bounded. How many of them were granted, how
 * fast, at what cost, and why the rest failed.
 *
 * @param of how many services were to acquire
 * @param granted how many were granted
 * @param nanos how long the run took, until the last grant or until it was given up
 * @param grantMs each grant's milliseconds from the start
 * @param rpcs the etcd requests of the run
 * @param peakThreads the JVM's peak thread count during the run
 * @param failures the failures by description, counted
 * @param gaveUp why the run was given up, or "all granted"
 * @param futures every acquisition's future, for withdrawing them
 */
record AcquisitionRun(
        int of,
        int granted,
        long nanos,
        double[] grantMs,
        RpcCounter.Snapshot rpcs,
        int peakThreads,
        Map<String, Integer> failures,
        String gaveUp,
        List<CompletableFuture<Grant>> futures) {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    /** @return whether every service was granted */
    boolean all() {
        return granted == of;
    }

    /**
     * Calls {@code lockAsync()} on every service, with at most {@code window} in flight, and waits
     * for all; gives up after {@code boundSeconds}, when the session is lost, or when the heap is over
     * 85% full.
     */
    static AcquisitionRun of(
            RpcCounter counter, EtcdSession session, List<LockService> services, int window, long boundSeconds)
            throws InterruptedException {
        int n = services.size();
        MX.resetPeakThreadCount();
        long[] grantedAt = new long[n];
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        Map<String, Integer> failures = new ConcurrentHashMap<>();
        Semaphore inFlight = new Semaphore(window);
        List<CompletableFuture<Grant>> futures = new ArrayList<>(n);
        RpcCounter.Snapshot r0 = counter.snapshot();
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.SECONDS.toNanos(boundSeconds);
        String gaveUp = null;
        for (int i = 0; i < n && gaveUp == null; i++) {
            while (!inFlight.tryAcquire(250, TimeUnit.MILLISECONDS)) {
                if ((gaveUp = whyGiveUp(session, deadline, boundSeconds)) != null) {
                    break;
                }
            }
            if (gaveUp != null || (i % 256 == 0 && (gaveUp = whyGiveUp(session, deadline, boundSeconds)) != null)) {
                break;
            }
            int k = i;
            CompletableFuture<Grant> f;
            try {
                f = services.get(i).lockAsync();
            } catch (RuntimeException e) { // a service already finished (its lease lost) refuses at once
                f = CompletableFuture.failedFuture(e);
            }
            futures.add(f);
            f.whenComplete((g, e) -> {
                if (e == null) {
                    grantedAt[k] = System.nanoTime();
                    granted.incrementAndGet();
                } else {
                    failures.merge(describe(e), 1, Integer::sum);
                }
                finished.incrementAndGet();
                inFlight.release();
            });
        }
        while (gaveUp == null && finished.get() < n) {
            Thread.sleep(50);
            gaveUp = whyGiveUp(session, deadline, boundSeconds);
        }
        long t1 = System.nanoTime();
        RpcCounter.Snapshot rpcs = counter.snapshot().minus(r0);
        int g = granted.get();
        double[] grantMs = new double[g];
        int j = 0;
        for (int i = 0; i < n && j < g; i++) {
            if (grantedAt[i] != 0) {
                grantMs[j++] = Stats.ms(grantedAt[i] - t0);
            }
        }
        if (gaveUp == null && g < n) {
            gaveUp = (n - g) + " failed";
        }
        return new AcquisitionRun(
                n,
                g,
                t1 - t0,
                j == g ? grantMs : java.util.Arrays.copyOf(grantMs, j),
                rpcs,
                MX.getPeakThreadCount(),
                failures,
                gaveUp == null ? "all granted" : gaveUp,
                futures);
    }

    private static String whyGiveUp(EtcdSession session, long deadline, long boundSeconds) {
        if (System.nanoTime() - deadline > 0) {
            return "not all granted within " + boundSeconds + " s";
        }
        if (session.state() == EtcdSession.State.LOST) {
            return "the session's lease was lost: "
                    + session.err().map(Throwable::getMessage).orElse("?");
        }
        Runtime rt = Runtime.getRuntime();
        long used = rt.totalMemory() - rt.freeMemory();
        if (used > 0.85 * rt.maxMemory()) {
            System.gc();
            used = rt.totalMemory() - rt.freeMemory();
            if (used > 0.85 * rt.maxMemory()) {
                return String.format(
                        Locale.ROOT, "given up: heap %.0f of %.0f MB used", used / 1e6, rt.maxMemory() / 1e6);
            }
        }
        return null;
    }

    private static String describe(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        String m = String.valueOf(e.getMessage())
                .replaceAll("[0-9a-f]{12,}", "<id>")
                .replaceAll("/\\d+\\b", "/<n>");
        return e.getClass().getSimpleName() + ": " + (m.length() > 120 ? m.substring(0, 120) + "..." : m);
    }

    /**
     * Reports this run as a row of {@code section}: one grant's median and p99 from the start, the counts, the
     * throughput, the etcd requests per lock, {@code more} (name, value, ...), and, when not all were granted, why.
     */
    void report(Report report, String section, String name, Object... more) {
        double secs = nanos / 1e9;
        String failed = failures.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(3)
                .map(e -> e.getValue() + " x " + e.getKey())
                .collect(Collectors.joining("; "));
        List<Object> kv = new ArrayList<>(List.of(
                "granted",
                granted,
                "of",
                of,
                all() ? "all_held_ms" : "gave_up_after_ms",
                nanos / 1e6,
                "acq_per_s",
                granted / secs,
                "etcd_rpcs_per_lock",
                (rpcs.calls("KV/") + rpcs.watchCreates()) / (double) of,
                "kv_per_lock",
                rpcs.calls("KV/") / (double) of,
                "watches_per_lock",
                rpcs.watchCreates() / (double) of,
                "keepalive_calls",
                rpcs.calls("Lease/LeaseKeepAlive"),
                "peak_jvm_threads",
                peakThreads));
        kv.addAll(List.of(more));
        if (!all()) {
            kv.addAll(List.of("why", gaveUp, "failures", failed.isEmpty() ? "none reported yet" : failed));
        }
        report.samples(section, name, grantMs, kv.toArray());
    }
}
