package io.disco.benchmarks;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Case "scale" (section 8), "scale of one session": 10,000 {@link LockService}s (1,000 with {@code
 * --quick}) on one {@link EtcdSession} with a TTL of {@value #TTL_SECONDS} s, each on a lock name of
 * its own, all acquiring and then holding. Measured, in order:
 * <ol>
 *   <li>creating the services ({@code newLock}, no etcd request): total time;</li>
 *   <li>acquiring all at once: every service's {@code lockAsync()} is called in one loop, then all
 *       are awaited, bounded (60 s full, 30 s quick; given up early when the lease is lost or the
 *       heap is over 85% full): time until the last grant, the median and p99 of one grant from the
 *       start, etcd requests per lock ({@link RpcCounter}), the JVM's peak thread count (futures
 *       complete on the session's callback executor), and, when not all were granted, how many were
 *       and why the others failed, plus one Get through the shared client and one through a second
 *       client (which of the two is stuck: etcd or this client). Then, if the burst did not get every
 *       lock, everything is withdrawn (the futures cancelled, the session closed), the shared client
 *       is given up to 60 s to answer a Get within 100 ms again, and a fresh session acquires again
 *       with at most {@value #PACED_WINDOW} acquisitions in flight, so that the figures below are
 *       still measured with every lock held (those rows then say "paced");</li>
 *   <li>settling: after the last grant, the time until etcd requests stop (a half second with fewer
 *       than n/100 + 5 calls, bounded at 30 s) and the requests per lock meanwhile (watches moved,
 *       re-reads);</li>
 *   <li>heap per held lock: used heap after GC ({@link Bench#usedHeap()}, as the sessions case
 *       measures) before the session was opened and with every lock held, divided by the count; also
 *       per idle service, before acquiring;</li>
 *   <li>keepalives per second while all are held ({@link Bench#keepalivesPerSecond}: LeaseKeepAlive
 *       calls over 10 s quick, 20 s full); a session renews every third of its TTL;</li>
 *   <li>a loss: a <em>second</em> jetcd client revokes {@link EtcdSession#leaseId()} from outside;
 *       from the revoke's answer, the time until every service's {@code done()} has completed (the
 *       last one; also the median and p99 of them, and the session's own {@code done()}), how many
 *       report a loss in {@code err()}, and how many lines the library logged meanwhile (counted, not
 *       printed; the start of the first is kept for the notes);</li>
 *   <li>closing the services and the session, then counting the keys left under the case's prefix
 *       (the prefix is deleted afterwards anyway, so nothing is left behind).</li>
 * </ol>
 * While the case runs, this JVM's {@code System.err} (where slf4j-simple writes) goes through a
 * filter that shortens every line to 300 characters: the library's WARN lines about the session
 * name all of its services, 10,000 here (about 390,000 characters a line). A failure (even an
 * {@link OutOfMemoryError}) is reported as a row and a note after the clean-up, so that the rest of
 * the table is still printed. This case runs last among the etcd cases.
 */
final class ScaleOfOneSession implements BenchCase {

    private static final String SECTION = "8 one session scale";
    private static final int TTL_SECONDS = 10;
    /** Acquisitions in flight at most when the all-at-once burst did not get every lock. */
    private static final int PACED_WINDOW = 256;

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    /** The run's context and what follows from it, set by {@link #run}. */
    private Bench bench;

    private int n;
    private String label;
    private String base;
    private final EtcdOptions options =
            EtcdOptions.builder().ttl(Duration.ofSeconds(TTL_SECONDS)).build();

    /** One acquisition run: how many were granted, how fast, at what cost, and why the rest failed. */
    private record Acquired(
            int granted,
            long nanos,
            double[] grantMs,
            RpcCounter.Snapshot rpcs,
            int peakThreads,
            Map<String, Integer> failures,
            String gaveUp,
            List<CompletableFuture<Grant>> futures) {
        boolean all(int n) {
            return granted == n;
        }
    }

    @Override
    public void run(Bench bench) throws Exception {
        this.bench = bench;
        this.n = bench.quick ? 1_000 : 10_000;
        this.label = String.format(Locale.ROOT, "%,d", n);
        this.base = bench.root + "/scale";
        long boundSeconds = bench.quick ? 30 : 60;
        long keepaliveWindowMs = bench.quick ? 10_000 : 20_000;
        Bench.log(
                "8. scale of one session: %s lock services on 1 session (TTL %d s), all acquire at once and hold,"
                        + " keepalives over %.0f s, then the lease is revoked from outside",
                label, TTL_SECONDS, keepaliveWindowMs / 1e3);
        KV kv = bench.client.getKVClient();
        Client outside = Client.builder()
                .endpoints(bench.endpoints.toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
        PrintStream realErr = System.err;
        // The library's WARN lines name every service of the session (10,000 here): shortened while this case runs.
        Stderr stderr = new Stderr(realErr);
        System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
        List<LockService> services = new ArrayList<>(n);
        EtcdSession session = null;
        String failure = null;
        try {
            long heap0 = Bench.usedHeap();
            session = EtcdSession.open(bench.client, options);

            // 1. create
            long c0 = System.nanoTime();
            create(session, services);
            long createNanos = System.nanoTime() - c0;
            long heapIdle = Bench.usedHeap();
            bench.report.row(
                    SECTION,
                    "create " + label + " LockServices on 1 session (newLock, no etcd request)",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "total_ms",
                    createNanos / 1e6,
                    "us_per_service",
                    createNanos / 1e3 / n);

            // 2. acquire all at once; if that does not get them all, withdraw and acquire paced
            Acquired burst = acquire(session, services, n, boundSeconds);
            bench.report.target(
                    label + " lock services on one session, acquired at once",
                    "all held, the lease kept",
                    burst.granted + " of " + label + " held",
                    burst.all(n),
                    burst.all(n) ? "" : burst.gaveUp);
            boolean paced = false;
            if (burst.all(n)) {
                report(
                        burst,
                        label
                                + " x lockAsync() at once: time until ALL are held (median/p99: one grant, from the start)");
            } else {
                // Is it etcd or this client? One Get through each client, before anything is withdrawn.
                double sharedGet = getMs(bench.client);
                double secondGet = getMs(outside);
                report(
                        burst,
                        label + " x lockAsync() at once: NOT all held (median/p99: one grant, from the start)",
                        "get_ms_via_shared_client",
                        sharedGet,
                        "get_ms_via_2nd_client",
                        secondGet);
                for (CompletableFuture<Grant> f : burst.futures) {
                    f.cancel(true);
                }
                session.close(); // revokes the lease (if etcd answers in time): whatever was granted or claimed is gone
                closeAll(services);
                services.clear();
                long recovered = recover(60_000);
                bench.report.notes.add(String.format(
                        Locale.ROOT,
                        "scale: the all-at-once burst got %d of %s locks (%s);"
                                + " when it was given up a Get took %s through the shared jetcd client and %s through a second one;"
                                + " after withdrawing, the shared client answered a Get within 100 ms again after %s",
                        burst.granted,
                        label,
                        burst.gaveUp,
                        msOrNone(sharedGet),
                        msOrNone(secondGet),
                        recovered < 0
                                ? "more than 60 s (gave up)"
                                : String.format(Locale.ROOT, "%.1f s", recovered / 1e3)));
                if (recovered < 0) {
                    throw new IllegalStateException(
                            "the shared jetcd client did not answer a Get within 100 ms for 60 s after"
                                    + " the burst was withdrawn");
                }
                bench.report.notes.add(String.format(
                        Locale.ROOT,
                        "scale: the rows marked 'paced' come from a second"
                                + " acquisition, at most %d in flight, on a fresh session",
                        PACED_WINDOW));
                paced = true;
                session = EtcdSession.open(bench.client, options);
                create(session, services);
                Acquired again = acquire(session, services, PACED_WINDOW, boundSeconds * 2);
                report(
                        again,
                        label + " x lockAsync(), at most " + PACED_WINDOW + " in flight (paced, after the burst"
                                + " failed): time until ALL are held" + (again.all(n) ? "" : ": NOT all held"));
                if (!again.all(n)) {
                    throw new IllegalStateException(
                            "paced acquisition got " + again.granted + " of " + n + " locks: " + again.gaveUp);
                }
            }
            String how = paced ? " (paced)" : "";

            // 3. settling: the requests that go on after the last grant
            RpcCounter.Snapshot s0 = bench.counter.snapshot();
            long[] settled = settle(30_000);
            RpcCounter.Snapshot settling = bench.counter.snapshot().minus(s0);
            bench.report.row(
                    SECTION,
                    "after the last grant" + how + ": time until etcd requests stop, and requests per lock"
                            + " meanwhile",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "quiet_after_ms",
                    (double) settled[0],
                    "quiet",
                    settled[1] == 1 ? "yes" : "no (still busy after 30 s)",
                    "kv_per_lock",
                    settling.calls("KV/") / (double) n,
                    "watches_per_lock",
                    settling.watchCreates() / (double) n,
                    "keepalive_calls",
                    settling.calls("Lease/LeaseKeepAlive"));

            // 4. heap per held lock
            long heapHeld = Bench.usedHeap();
            bench.report.row(
                    SECTION,
                    "heap per HELD lock, " + label + " held on 1 session" + how + " (used heap after GC)",
                    (heapHeld - heap0) / (double) n,
                    Double.NaN,
                    "B",
                    "heap_bytes_per_idle_service",
                    (heapIdle - heap0) / (double) n,
                    "held_minus_idle_bytes",
                    (heapHeld - heapIdle) / (double) n,
                    "heap_total_mb",
                    (heapHeld - heap0) / 1e6);

            // 5. keepalives while holding
            double keepalives = bench.keepalivesPerSecond(keepaliveWindowMs);
            int held = 0;
            for (LockService s : services) {
                if (s.held().isPresent() && s.err().isEmpty()) {
                    held++;
                }
            }
            bench.report.row(
                    SECTION,
                    "keepalives/s while " + label + " locks are held on 1 session" + how + " (TTL " + TTL_SECONDS
                            + " s)",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "keepalives_per_s",
                    keepalives,
                    "one_lease_renews_per_s",
                    3.0 / TTL_SECONDS,
                    "window_s",
                    keepaliveWindowMs / 1e3,
                    "still_held_after",
                    held,
                    "session",
                    session.state());
            if (held != n) {
                throw new IllegalStateException("only " + held + " of " + n
                        + " locks still held after the keepalive window;" + " session " + session.state()
                        + session.err().map(e -> ": " + e.getMessage()).orElse(""));
            }

            // 6. revoke from outside; every done() must complete
            long[] doneAt = new long[n];
            CountDownLatch allDone = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                int k = i;
                services.get(i).done().thenRun(() -> {
                    doneAt[k] = System.nanoTime();
                    allDone.countDown();
                });
            }
            long[] sessionDoneAt = new long[1];
            CountDownLatch sessionDone = new CountDownLatch(1);
            session.done().thenRun(() -> {
                sessionDoneAt[0] = System.nanoTime();
                sessionDone.countDown();
            });
            MX.resetPeakThreadCount();
            long[] log0 = stderr.quiet();
            long sent = System.nanoTime();
            outside.getLeaseClient().revoke(session.leaseId()).get(10, TimeUnit.SECONDS);
            long answered = System.nanoTime();
            boolean all = allDone.await(boundSeconds, TimeUnit.SECONDS);
            boolean sessionFinished = sessionDone.await(10, TimeUnit.SECONDS);
            Thread.sleep(300); // lines logged just after the last done()
            long[] log1 = stderr.forward();
            long loggedLines = log1[0] - log0[0];
            double loggedKb = (log1[1] - log0[1]) / 1024.0;
            int peakLoss = MX.getPeakThreadCount();
            if (!all) {
                throw new IllegalStateException(allDone.getCount() + " of " + n + " services' done() had not completed "
                        + boundSeconds + " s after the revoke");
            }
            double[] afterRevoke = new double[n];
            double first = Double.MAX_VALUE;
            double last = -Double.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                afterRevoke[i] = Stats.ms(doneAt[i] - answered);
                first = Math.min(first, afterRevoke[i]);
                last = Math.max(last, afterRevoke[i]);
            }
            int lost = 0;
            for (LockService s : services) {
                if (s.err().isPresent()) {
                    lost++;
                }
            }
            bench.report.row(
                    SECTION,
                    "lease revoked from OUTSIDE (2nd client) -> ALL " + label + " services' done()" + how
                            + " (median/p99: one service, from the revoke's answer)",
                    Stats.median(afterRevoke),
                    Stats.p99(afterRevoke),
                    "ms",
                    "last_done_ms",
                    last,
                    "first_done_ms",
                    first,
                    "session_done_ms",
                    sessionFinished ? Stats.ms(sessionDoneAt[0] - answered) : Double.NaN,
                    "revoke_rpc_ms",
                    Stats.ms(answered - sent),
                    "services_with_err",
                    lost,
                    "log_lines_meanwhile",
                    loggedLines,
                    "log_kb",
                    loggedKb,
                    "peak_jvm_threads",
                    peakLoss);
            if (loggedLines > 0) {
                bench.report.notes.add(String.format(
                        Locale.ROOT,
                        "scale: while %s services lost their lease, the library"
                                + " logged %d lines (%.0f KB) to stderr (counted, not printed); the first begins: %s",
                        label,
                        loggedLines,
                        loggedKb,
                        stderr.firstSinceQuiet()));
            }
        } catch (Exception | OutOfMemoryError e) {
            stderr.forward();
            failure = e.toString();
            e.printStackTrace(); // shortened line by line, like the library's lines
        } finally {
            stderr.forward();
            try {
                long k0 = System.nanoTime();
                if (session != null) {
                    session.close(); // first: the services then finish locally, without one release each
                }
                closeAll(services);
                long closeNanos = System.nanoTime() - k0;
                services.clear();
                Object left = "unknown";
                try {
                    left = kv.get(
                                    Bench.bs(base + "/"),
                                    GetOption.builder()
                                            .isPrefix(true)
                                            .withCountOnly(true)
                                            .build())
                            .get(10, TimeUnit.SECONDS)
                            .getCount();
                    kv.delete(
                                    Bench.bs(base + "/"),
                                    DeleteOption.builder().isPrefix(true).build())
                            .get(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    failure = (failure == null ? "" : failure + "; then ") + "clean-up of " + base + "/ failed: " + e;
                }
                outside.close();
                bench.report.row(
                        SECTION,
                        "close the session + " + label + " services, then keys left under the prefix",
                        Double.NaN,
                        Double.NaN,
                        "",
                        "close_ms",
                        closeNanos / 1e6,
                        "keys_left_before_cleanup",
                        left);
            } finally {
                System.setErr(realErr);
            }
        }
        if (failure != null) {
            bench.report.row(SECTION, "FAILED: " + failure, Double.NaN, Double.NaN, "");
            bench.report.notes.add("scale of one session failed: " + failure + " (stack trace above)");
        }
    }

    private void create(EtcdSession session, List<LockService> services) {
        for (int i = 0; i < n; i++) {
            services.add(session.newLock(base + "/" + i));
        }
    }

    private static void closeAll(List<LockService> services) {
        for (LockService s : services) {
            s.close();
        }
    }

    /**
     * Calls {@code lockAsync()} on every service, with at most {@code window} in flight, and waits
     * for all; gives up after {@code boundSeconds}, when the session is lost, or when the heap is over
     * 85% full.
     */
    private Acquired acquire(EtcdSession session, List<LockService> services, int window, long boundSeconds)
            throws InterruptedException {
        MX.resetPeakThreadCount();
        long[] grantedAt = new long[n];
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        Map<String, Integer> failures = new ConcurrentHashMap<>();
        Semaphore inFlight = new Semaphore(window);
        List<CompletableFuture<Grant>> futures = new ArrayList<>(n);
        RpcCounter.Snapshot r0 = bench.counter.snapshot();
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
        RpcCounter.Snapshot rpcs = bench.counter.snapshot().minus(r0);
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
        return new Acquired(
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

    /** Milliseconds one Get of a missing key takes through {@code c}; NaN when it is not answered within 2 s. */
    private double getMs(Client c) {
        long t = System.nanoTime();
        try {
            c.getKVClient().get(Bench.bs(base + "-probe")).get(2, TimeUnit.SECONDS);
            return Stats.ms(System.nanoTime() - t);
        } catch (Exception e) {
            return Double.NaN;
        }
    }

    private static String msOrNone(double ms) {
        return Double.isNaN(ms) ? "no answer within 2 s" : String.format(Locale.ROOT, "%.1f ms", ms);
    }

    /** Waits until the shared client answers a Get within 100 ms. @return milliseconds waited, or -1 after {@code boundMs} */
    private long recover(long boundMs) throws InterruptedException {
        long t0 = System.nanoTime();
        while (true) {
            double ms = getMs(bench.client);
            long waited = (System.nanoTime() - t0) / 1_000_000;
            if (ms <= 100) {
                return waited;
            }
            if (waited >= boundMs) {
                return -1;
            }
            Thread.sleep(250);
        }
    }

    private void report(Acquired a, String name, Object... more) {
        double secs = a.nanos / 1e9;
        String failures = a.failures.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(3)
                .map(e -> e.getValue() + " x " + e.getKey())
                .collect(Collectors.joining("; "));
        List<Object> kv = new ArrayList<>(List.of(
                "granted",
                a.granted,
                "of",
                n,
                a.all(n) ? "all_held_ms" : "gave_up_after_ms",
                a.nanos / 1e6,
                "acq_per_s",
                a.granted / secs,
                "etcd_rpcs_per_lock",
                (a.rpcs.calls("KV/") + a.rpcs.watchCreates()) / (double) n,
                "kv_per_lock",
                a.rpcs.calls("KV/") / (double) n,
                "watches_per_lock",
                a.rpcs.watchCreates() / (double) n,
                "keepalive_calls",
                a.rpcs.calls("Lease/LeaseKeepAlive"),
                "peak_jvm_threads",
                a.peakThreads));
        kv.addAll(List.of(more));
        if (!a.all(n)) {
            kv.addAll(List.of("why", a.gaveUp, "failures", failures.isEmpty() ? "none reported yet" : failures));
        }
        bench.report.row(SECTION, name, Stats.median(a.grantMs), Stats.p99(a.grantMs), "ms", kv.toArray());
    }

    /**
     * Waits until etcd requests stop: a half second in which this client started fewer than
     * n/100 + 5 calls. Gives up after {@code boundMs}.
     *
     * @return {milliseconds waited, 1 if it got quiet else 0}
     */
    private long[] settle(long boundMs) throws InterruptedException {
        long t0 = System.nanoTime();
        while (true) {
            RpcCounter.Snapshot before = bench.counter.snapshot();
            Thread.sleep(500);
            RpcCounter.Snapshot d = bench.counter.snapshot().minus(before);
            long calls = d.calls().values().stream().mapToLong(Long::longValue).sum();
            long waited = (System.nanoTime() - t0) / 1_000_000;
            if (calls < n / 100 + 5) {
                return new long[] {waited, 1};
            }
            if (waited >= boundMs) {
                return new long[] {waited, 0};
            }
        }
    }

    /**
     * Stands in for {@code System.err} while the case runs: forwards every line shortened to
     * {@value #KEEP} characters, or, while {@link #quiet()}, only counts them (keeping the start of
     * the first).
     */
    private static final class Stderr extends OutputStream {
        private static final int KEEP = 300;
        private final PrintStream real;
        private final StringBuilder line = new StringBuilder();
        private long lineChars;
        private boolean forwarding = true;
        private String firstSinceQuiet;
        private long lines;
        private long bytes;

        Stderr(PrintStream real) {
            this.real = real;
        }

        @Override
        public synchronized void write(int b) {
            bytes++;
            if (b == '\n') {
                lines++;
                String shown = lineChars > KEEP ? line + " ... (" + lineChars + " characters)" : line.toString();
                if (forwarding) {
                    real.println(shown);
                } else if (firstSinceQuiet == null) {
                    firstSinceQuiet = shown;
                }
                line.setLength(0);
                lineChars = 0;
            } else {
                lineChars++;
                if (line.length() < KEEP) {
                    line.append((char) b);
                }
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        /** Stops forwarding. @return {lines, bytes} so far */
        synchronized long[] quiet() {
            forwarding = false;
            firstSinceQuiet = null;
            return new long[] {lines, bytes};
        }

        /** Forwards again. @return {lines, bytes} so far */
        synchronized long[] forward() {
            forwarding = true;
            return new long[] {lines, bytes};
        }

        synchronized String firstSinceQuiet() {
            return firstSinceQuiet;
        }
    }
}
