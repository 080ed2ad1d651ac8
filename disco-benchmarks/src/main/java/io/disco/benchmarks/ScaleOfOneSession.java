package io.disco.benchmarks;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

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
 *       (the prefix is deleted afterwards anyway, so nothing is left behind);</li>
 *   <li>the burst's reference, when the burst held every lock: as many raw create-if-absent Txns through the same
 *       client, {@value #PACED_WINDOW} in flight ({@link RawBurst});</li>
 * </ol>
 * While the case runs, this JVM's {@code System.err} (where slf4j-simple writes) goes through a
 * filter that shortens every line to 300 characters: the library's WARN lines about the session
 * name all of its services, 10,000 here (about 390,000 characters a line). A failure (even an
 * {@link OutOfMemoryError}) is reported as a row and a note after the clean-up, so that the rest of
 * the table is still printed. This case runs last among the etcd cases.
 *
 * <p>This file holds the case's steps in their order; its parts are each a file of their own: {@link
 * AcquisitionRun} (an acquisition of every service, all at once or paced), {@link GetProbe} (which is stuck,
 * etcd or this client), {@link Settling} (until the requests stop), {@link LeaseRevokedFromOutside} (the loss),
 * {@link ShortenedStderr} (the filter of {@code System.err}).
 */
final class ScaleOfOneSession implements BenchCase {

    static final String SECTION = "8 one session scale";
    private static final int TTL_SECONDS = 10;
    /** Acquisitions in flight at most when the all-at-once burst did not get every lock. */
    private static final int PACED_WINDOW = 256;

    /** What follows from the run's mode, set by {@link #run}. */
    private int n;

    private String label;
    private String base;
    private final EtcdOptions options =
            EtcdOptions.builder().ttl(Duration.ofSeconds(TTL_SECONDS)).build();

    @Override
    public void run(Bench bench) throws Exception {
        this.n = bench.quick ? 1_000 : 10_000;
        this.label = String.format(Locale.ROOT, "%,d", n);
        this.base = bench.root + "/scale";
        String probeKey = base + "-probe";
        long boundSeconds = bench.quick ? 30 : 60;
        long keepaliveWindowMs = bench.quick ? 10_000 : 20_000;
        Bench.log(
                "8. scale of one session: %s lock services on 1 session (TTL %d s), all acquire at once and hold,"
                        + " keepalives over %.0f s, then the lease is revoked from outside",
                label, TTL_SECONDS, keepaliveWindowMs / 1e3);
        Client outside = Client.builder()
                .endpoints(bench.endpoints.toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
        // The library's WARN lines name every service of the session (10,000 here): shortened while this case runs.
        ShortenedStderr stderr = ShortenedStderr.install();
        List<LockService> services = new ArrayList<>(n);
        EtcdSession session = null;
        String failure = null;
        double burstSeconds = Double.NaN;
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
            AcquisitionRun burst = AcquisitionRun.of(bench.counter, session, services, n, boundSeconds);
            bench.report.target(
                    label + " lock services on one session, acquired at once",
                    "all held, the lease kept",
                    burst.granted() + " of " + label + " held",
                    burst.all(),
                    burst.all() ? "" : burst.gaveUp());
            boolean paced = false;
            if (burst.all()) {
                burst.report(
                        bench.report,
                        SECTION,
                        label
                                + " x lockAsync() at once: time until ALL are held (median/p99: one grant, from the start)");
                burstSeconds = burst.nanos() / 1e9;
            } else {
                // Is it etcd or this client? One Get through each client, before anything is withdrawn.
                double sharedGet = GetProbe.ms(bench.client, probeKey);
                double secondGet = GetProbe.ms(outside, probeKey);
                burst.report(
                        bench.report,
                        SECTION,
                        label + " x lockAsync() at once: NOT all held (median/p99: one grant, from the start)",
                        "get_ms_via_shared_client",
                        sharedGet,
                        "get_ms_via_2nd_client",
                        secondGet);
                for (CompletableFuture<Grant> f : burst.futures()) {
                    f.cancel(true);
                }
                session.close(); // revokes the lease (if etcd answers in time): whatever was granted or claimed is gone
                closeAll(services);
                services.clear();
                long recovered = GetProbe.recovery(bench.client, probeKey, 60_000);
                bench.report.notes.add(String.format(
                        Locale.ROOT,
                        "scale: the all-at-once burst got %d of %s locks (%s);"
                                + " when it was given up a Get took %s through the shared jetcd client and %s through a second one;"
                                + " after withdrawing, the shared client answered a Get within 100 ms again after %s",
                        burst.granted(),
                        label,
                        burst.gaveUp(),
                        GetProbe.describe(sharedGet),
                        GetProbe.describe(secondGet),
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
                AcquisitionRun again =
                        AcquisitionRun.of(bench.counter, session, services, PACED_WINDOW, boundSeconds * 2);
                again.report(
                        bench.report,
                        SECTION,
                        label + " x lockAsync(), at most " + PACED_WINDOW + " in flight (paced, after the burst"
                                + " failed): time until ALL are held" + (again.all() ? "" : ": NOT all held"));
                if (!again.all()) {
                    throw new IllegalStateException(
                            "paced acquisition got " + again.granted() + " of " + n + " locks: " + again.gaveUp());
                }
            }
            String how = paced ? " (paced)" : "";

            // 3. settling: the requests that go on after the last grant
            RpcCounter.Snapshot s0 = bench.counter.snapshot();
            Settling settled = Settling.await(bench.counter, n / 100 + 5, 30_000);
            RpcCounter.Snapshot settling = bench.counter.snapshot().minus(s0);
            bench.report.row(
                    SECTION,
                    "after the last grant" + how + ": time until etcd requests stop, and requests per lock"
                            + " meanwhile",
                    Double.NaN,
                    Double.NaN,
                    "",
                    "quiet_after_ms",
                    (double) settled.waitedMs(),
                    "quiet",
                    settled.quiet() ? "yes" : "no (still busy after 30 s)",
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
            LeaseRevokedFromOutside.measure(bench, outside, session, services, stderr, boundSeconds, how);
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
                    left = bench.keysUnder(base, 10);
                    bench.deleteUnder(base);
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
                stderr.restore();
            }
        }
        if (failure == null && !Double.isNaN(burstSeconds)) {
            burstTarget(bench, burstSeconds);
        }
        if (failure != null) {
            bench.report.row(SECTION, "FAILED: " + failure, Double.NaN, Double.NaN, "");
            bench.report.notes.add("scale of one session failed: " + failure + " (stack trace above)");
        }
    }

    /**
     * The burst against its reference, measured after everything else of the case (a lease with as many keys, revoked
     * and its keys deleted, would slow what follows it): as many raw create-if-absent Txns through the same client,
     * {@value #PACED_WINDOW} in flight ({@link RawBurst}), timed until the last is answered.
     */
    private void burstTarget(Bench bench, double held) throws Exception {
        double raw = RawBurst.seconds(bench.client, bench.root + "/scale-raw", n, PACED_WINDOW);
        bench.report.row(
                SECTION,
                label + " raw create-if-absent Txns at once, " + PACED_WINDOW + " in flight (the burst's reference)",
                Double.NaN,
                Double.NaN,
                "",
                "all_answered_ms",
                raw * 1e3);
        bench.report.target(
                label + " lockAsync() at once on one session, all held",
                "<= 2.2 s, or <= 1.2 x the same number of raw create Txns (" + PACED_WINDOW + " in flight)",
                String.format(Locale.ROOT, "%.2f s; raw %.2f s: %.2f x", held, raw, held / raw),
                held <= 2.2 || held <= 1.2 * raw,
                "beyond the raw create Txns: disco's claims (metadata, watches on the held keys, the grants'"
                        + " bookkeeping) on the same two cores");
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
}
