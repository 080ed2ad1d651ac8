package io.disco.benchmarks;

import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdSession;
import io.etcd.jetcd.Client;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The scale case's loss ({@link ScaleOfOneSession}): a <em>second</em> jetcd client revokes {@link
 * EtcdSession#leaseId()} from outside; from the revoke's answer, the time until every service's {@code done()} has
 * completed (the last one; also the median and p99 of them, and the session's own {@code done()}), how many report
 * a loss in {@code err()}, and how many lines the library logged meanwhile (counted, not printed; the start of the
 * first is kept for the notes).
 */
final class LeaseRevokedFromOutside {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private LeaseRevokedFromOutside() {}

    /**
     * Revokes {@code session}'s lease through {@code outside} and reports how its {@code services} learn of it.
     *
     * @param stderr quiet while the services finish, so that their lines are counted, not printed
     * @param boundSeconds how long every service's {@code done()} may take
     * @param how what the row's name adds, " (paced)" after a paced acquisition
     * @throws IllegalStateException if not every service's {@code done()} completed within {@code boundSeconds}
     */
    static void measure(
            Bench bench,
            Client outside,
            EtcdSession session,
            List<LockService> services,
            ShortenedStderr stderr,
            long boundSeconds,
            String how)
            throws Exception {
        int n = services.size();
        String label = String.format(Locale.ROOT, "%,d", n);
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
        bench.report.samples(
                ScaleOfOneSession.SECTION,
                "lease revoked from OUTSIDE (2nd client) -> ALL " + label + " services' done()" + how
                        + " (median/p99: one service, from the revoke's answer)",
                afterRevoke,
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
    }
}
