package io.disco.benchmarks;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.lock.LockService;
import io.disco.micrometer.DiscoMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.disco.semaphore.SemaphoreService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testing.EtcdCluster;
import io.disco.testing.RpcCounter;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The benchmark command: starts a throwaway etcd (or uses {@code DISCO_ETCD_ENDPOINTS}), measures
 * everything side by side against it, prints one table and optionally writes it as JSON.
 *
 * <pre>java -cp ... io.disco.benchmarks.Bench [--quick] [--json FILE] [--no-jmh] [--uncontended-only] [--only CASE,...]</pre>
 *
 * <p>{@code --only many-locks,scale} runs the named cases alone (in their usual order); the names
 * are listed in {@link #CASES} and by {@code --help}.
 */
public final class Bench {

    private static final ByteSequence EMPTY = ByteSequence.EMPTY;

    // Package-private: the cases in files of their own (ManyLocksAtOnce, ScaleOfOneSession) share them.
    final boolean quick;
    /** Set by {@code --uncontended-only}: section 1 alone, with full iterations. */
    private boolean uncontendedOnly;
    /** Set by {@code --only}: the names of the cases to run (see {@link #CASES}); null runs all of them. */
    private Set<String> only;
    final Report report = new Report();
    final String root = "/disco-bench/" + UUID.randomUUID().toString().substring(0, 8);
    /** The endpoints of the etcd measured against, for a case that needs a second client. */
    List<String> endpoints;
    Client client;
    RpcCounter counter;

    /** The case names {@code --only} accepts, in the order they run. */
    static final List<String> CASES = List.of("uncontended", "contended", "contended-jetcd", "semaphore", "watch-delivery",
            "rwlock", "election", "sessions", "many-locks", "scale", "guard-filter", "keyed-guard", "guard-jmh");

    private Bench(boolean quick) {
        this.quick = quick;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("bench.log", "warn"));
        boolean quick = false;
        boolean jmh = true;
        boolean only = false;
        Set<String> cases = null;
        Path json = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-jmh" -> jmh = false;
                case "--uncontended-only" -> only = true;
                case "--only" -> {
                    if (i + 1 >= args.length) {
                        usage("--only needs a comma-separated list of cases: " + String.join(",", CASES));
                    }
                    cases = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    for (String c : cases) {
                        if (!CASES.contains(c)) {
                            usage("--only: unknown case '" + c + "'; cases: " + String.join(",", CASES));
                        }
                    }
                }
                case "--json" -> {
                    if (i + 1 >= args.length) {
                        usage("--json needs a file name");
                    }
                    json = Path.of(args[++i]);
                }
                case "-h", "--help" -> usage(null);
                default -> usage("unknown argument: " + args[i]);
            }
        }
        long t0 = System.nanoTime();
        Bench b = new Bench(quick);
        b.uncontendedOnly = only;
        b.only = cases;
        b.run(jmh);
        b.report.meta.put("elapsed_s", (System.nanoTime() - t0) / 1e9);
        System.out.println();
        System.out.print(b.report.table());
        System.out.printf(Locale.ROOT, "%nelapsed %.1f s%n", (System.nanoTime() - t0) / 1e9);
        if (json != null) {
            b.report.writeJson(json);
            System.out.println("wrote " + json.toAbsolutePath());
        }
        System.exit(0); // jetcd and Jetty leave non-daemon threads behind
    }

    private static void usage(String error) {
        if (error != null) {
            System.err.println(error);
        }
        System.err.println("usage: Bench [--quick] [--json FILE] [--no-jmh] [--uncontended-only] [--only CASE,...]");
        System.err.println("  --only CASE,...  run only the named cases, of: " + String.join(",", CASES));
        System.exit(error == null ? 0 : 2);
    }

    private static final long START = System.nanoTime();

    static void log(String fmt, Object... args) {
        System.out.printf(Locale.ROOT, "[bench %5.1fs] " + fmt + "%n", prepend((System.nanoTime() - START) / 1e9, args));
        System.out.flush();
    }

    private void run(boolean jmh) throws Exception {
        report.meta.put("mode", quick ? "quick" : "full");
        report.meta.put("java", System.getProperty("java.version"));
        report.meta.put("cpus", Runtime.getRuntime().availableProcessors());
        try (EtcdCluster cluster = EtcdCluster.start(1)) {
            log("etcd: %s", cluster);
            report.meta.put("etcd", cluster.toString());
            endpoints = cluster.endpoints();
            counter = new RpcCounter();
            client = Client.builder().endpoints(cluster.endpoints().toArray(String[]::new))
                    .interceptor(EtcdDeadlines.unary(EtcdOptions.defaults().requestTimeout()), counter).build();
            try {
                client.getKVClient().get(bs(root)).get(10, TimeUnit.SECONDS); // connect
                if (runs("uncontended")) {
                    uncontended();
                }
                if (uncontendedOnly) {
                    return;
                }
                if (runs("contended")) {
                    contended();
                }
                if (runs("contended-jetcd")) {
                    contendedJetcd();
                }
                contendedTargets();
                if (runs("semaphore")) {
                    semaphore();
                }
                if (runs("watch-delivery")) {
                    watchDelivery();
                }
                if (runs("rwlock")) {
                    rwlock();
                }
                if (runs("election")) {
                    election();
                }
                if (runs("sessions")) {
                    sessions();
                }
                if (runs("many-locks")) {
                    new ManyLocksAtOnce(this).run();
                }
                if (runs("scale")) {
                    new ScaleOfOneSession(this).run();
                }
            } finally {
                client.close();
            }
        }
        if (runs("guard-filter")) {
            guardFilter();
        }
        if (runs("keyed-guard")) {
            keyedGuardMemory();
        }
        if (jmh && runs("guard-jmh")) {
            guardJmh();
        } else if (!jmh) {
            report.notes.add("JMH guard benchmark skipped (--no-jmh)");
        }
    }

    /** Whether {@code --only} selects the case {@code name} (every case when it was not given). */
    private boolean runs(String name) {
        return only == null || only.contains(name);
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------ 1. uncontended lock+unlock

    private interface Op2 {
        void run() throws Exception;
    }

    private void uncontended() throws Exception {
        int warm = quick ? 60 : 500;
        int rounds = quick ? 200 : 2000;
        log("1. uncontended lock+unlock: %d warm-up + %d interleaved rounds of 5 variants", warm, rounds);
        KV kv = client.getKVClient();
        EtcdSession session = EtcdSession.open(client, EtcdOptions.defaults());
        EtcdSession metered = EtcdSession.open(client, EtcdOptions.builder()
                .listener(DiscoMetrics.of(new SimpleMeterRegistry())).build());
        long lease = get(client.getLeaseClient().grant(300)).getID();
        try (LockService disco = session.newLock(root + "/u/disco");
             LockService discoMetered = metered.newLock(root + "/u/disco-metered")) {
            ByteSequence floorKey = bs(root + "/u/floor/" + Long.toHexString(lease));
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            Op2 floor = () -> {
                TxnResponse r = get(kv.txn().If(new Cmp(floorKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(floorKey, EMPTY, withLease)).commit());
                if (!r.isSucceeded()) {
                    throw new IllegalStateException("floor key already there");
                }
                get(kv.delete(floorKey));
            };
            // disco's exact two requests (create Txn that also reads the owner; guarded delete Txn), raw
            String shapePrefix = root + "/u/shape/";
            ByteSequence shapeKey = bs(shapePrefix + Long.toHexString(lease));
            GetOption firstCreated = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();
            Op2 shape = () -> {
                TxnResponse r = get(kv.txn().If(new Cmp(shapeKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(shapeKey, EMPTY, withLease), Op.get(bs(shapePrefix), firstCreated))
                        .Else(Op.get(shapeKey, GetOption.DEFAULT), Op.get(bs(shapePrefix), firstCreated)).commit());
                long rev = r.getHeader().getRevision();
                get(kv.txn().If(new Cmp(shapeKey, Cmp.Op.EQUAL, CmpTarget.createRevision(rev)))
                        .Then(Op.delete(shapeKey, DeleteOption.DEFAULT)).commit());
            };
            ByteSequence jetcdName = bs(root + "/u/jetcd");
            Op2 jetcd = () -> {
                LockResponse r = get(client.getLockClient().lock(jetcdName, lease));
                get(client.getLockClient().unlock(r.getKey()));
            };
            Op2 discoOp = () -> {
                disco.lock();
                disco.unlock();
            };
            Op2 meteredOp = () -> {
                discoMetered.lock();
                discoMetered.unlock();
            };
            String[] names = {"disco", "floor", "disco-shape raw", "jetcd Lock", "disco with Micrometer"};
            Op2[] ops = {discoOp, floor, shape, jetcd, meteredOp};
            double[][] samples = new double[ops.length][rounds];
            for (int i = 0; i < warm + rounds; i++) {
                for (int j = 0; j < ops.length; j++) {
                    int v = (i + j) % ops.length; // rotate the order every round
                    long s = System.nanoTime();
                    ops[v].run();
                    long e = System.nanoTime();
                    if (i >= warm) {
                        samples[v][i - warm] = Stats.ms(e - s);
                    }
                }
            }
            // RPCs of one disco lock+unlock (separate short pass, so the counts are not mixed)
            int n = 50;
            RpcCounter.Snapshot before = counter.snapshot();
            for (int i = 0; i < n; i++) {
                discoOp.run();
            }
            RpcCounter.Snapshot d = counter.snapshot().minus(before);
            double discoRpcs = (d.calls("KV/") + d.watchCreates()) / (double) n;

            double[] med = new double[ops.length];
            double[] p99 = new double[ops.length];
            for (int v = 0; v < ops.length; v++) {
                med[v] = Stats.median(samples[v]);
                p99[v] = Stats.p99(samples[v]);
            }
            report.row("1 uncontended", "disco lock+unlock", med[0], p99[0], "ms",
                    "vs_floor", med[0] / med[1], "vs_jetcd", med[0] / med[3], "etcd_rpcs", discoRpcs);
            report.row("1 uncontended", "floor: create-if-absent Txn + Delete", med[1], p99[1], "ms", "rpcs", 2);
            report.row("1 uncontended", "disco's 2 Txns sent raw", med[2], p99[2], "ms", "vs_floor", med[2] / med[1]);
            report.row("1 uncontended", "jetcd Lock lock+unlock", med[3], p99[3], "ms", "vs_floor", med[3] / med[1], "rpcs", 2);
            double withMeters = med[4] / med[0];
            report.row("1 uncontended", "disco lock+unlock, DiscoMetrics bound", med[4], p99[4], "ms", "vs_disco", withMeters);
            report.target("disco lock+unlock with Micrometer bound vs without", "<= 1.02 x (within noise)",
                    String.format(Locale.ROOT, "%.3f x (%.3f ms vs %.3f ms)", withMeters, med[4], med[0]), withMeters <= 1.02,
                    withMeters <= 1.02 ? "" : "the listener events are queued and told on the callback executor per acquisition and release");

            double rf = med[0] / med[1];
            String cause = String.format(Locale.ROOT,
                    "disco %.3f ms = floor %.3f + owner read inside the create Txn %+.3f (disco's Txns sent raw: %.3f)"
                            + " + client-side work %+.3f (the claim's steps: building and reading Txns, futures, two timers"
                            + " per request; not the hand-offs to the session thread, whose removal measured no difference);"
                            + " %.1f etcd RPCs per lock+unlock",
                    med[0], med[1], med[2] - med[1], med[2], med[0] - med[2], discoRpcs);
            report.target("disco lock+unlock vs floor", "median <= 1.10 x floor",
                    String.format(Locale.ROOT, "%.3f x", rf), rf <= 1.10, cause);
            double rj = med[0] / med[3];
            report.target("disco lock+unlock vs jetcd Lock", "median <= jetcd Lock",
                    String.format(Locale.ROOT, "%.3f x (disco %.3f ms, jetcd %.3f ms)", rj, med[0], med[3]), rj <= 1.0,
                    rj <= 1.0 ? "" : cause);
        } finally {
            session.close();
            metered.close();
            client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ 2. contended handoff

    private int cyclesPerOwner(int k) {
        int total = quick ? 80 : 600;
        return Math.max(2, (total + k - 1) / k);
    }

    private static final int[] OWNERS = {1, 4, 16, 64};
    /** disco's acquisitions per second at K = 64 in the measurement that opened the performance issue (part 2). */
    private static final double K64_BEFORE = 259;
    /** Contended acquisitions per second by K, disco's and jetcd's, for the targets. */
    private final Map<Integer, Double> discoAcqPerSec = new TreeMap<>();
    private final Map<Integer, Double> jetcdAcqPerSec = new TreeMap<>();

    /** One owner's acquire and release, as measured: lock() returns when held, unlock() when released. */
    private interface Owner {
        void lock() throws Exception;

        void unlock() throws Exception;
    }

    /** The measured result of one contended run. */
    private record Contended(int k, int acquisitions, double seconds, double[] handoffMs, double[] holdMs, RpcCounter.Snapshot rpcs) {
    }

    private Contended runContended(List<Owner> owners, int cycles) throws Exception {
        int k = owners.size();
        int total = k * cycles;
        long[] granted = new long[total];
        long[] released = new long[total];
        AtomicInteger seq = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (Owner o : owners) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int c = 0; c < cycles; c++) {
                        o.lock();
                        long g = System.nanoTime();
                        int s = seq.getAndIncrement(); // under the lock: acquisitions are numbered in grant order
                        granted[s] = g;
                        o.unlock();
                        released[s] = System.nanoTime();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "bench-owner");
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
        return new Contended(k, total, (t1 - t0) / 1e9, handoff, hold, rpcs);
    }

    private static int over(double[] samples, double limit) {
        int n = 0;
        for (double v : samples) {
            if (v > limit) {
                n++;
            }
        }
        return n;
    }

    private void contended() throws Exception {
        log("2. contended handoff, disco: K = 1, 4, 16, 64 owners");
        EtcdOptions opts = EtcdOptions.defaults();
        List<Double> perAcq = new ArrayList<>();
        List<String> perAcqText = new ArrayList<>();
        double rpcsAtWait = Double.NaN;
        for (int k : OWNERS) {
            List<EtcdSession> sessions = new ArrayList<>();
            List<Owner> owners = new ArrayList<>();
            String prefix = root + "/c/disco-" + k;
            try {
                for (int i = 0; i < k; i++) {
                    EtcdSession s = EtcdSession.open(client, opts);
                    sessions.add(s);
                    LockService svc = s.newLock(prefix);
                    owners.add(new Owner() {
                        @Override
                        public void lock() throws Exception {
                            svc.lock();
                        }

                        @Override
                        public void unlock() {
                            svc.unlock();
                        }
                    });
                }
                runContended(owners.subList(0, 1), 5); // warm-up on the fresh sessions
                Contended c = runContended(owners, cyclesPerOwner(k));
                long kvCalls = c.rpcs.calls("KV/");
                double rpa = (kvCalls + c.rpcs.watchCreates()) / (double) c.acquisitions;
                perAcq.add(rpa);
                perAcqText.add(String.format(Locale.ROOT, "K=%d: %.2f", k, rpa));
                discoAcqPerSec.put(k, c.acquisitions / c.seconds);
                report.row("2 contended disco", "K=" + k + " handoff", Stats.median(c.handoffMs), Stats.p99(c.handoffMs), "ms",
                        "acq_per_s", c.acquisitions / c.seconds, "unlock_ms", Stats.median(c.holdMs), "rpcs_per_acq", rpa,
                        "kv_per_acq", kvCalls / (double) c.acquisitions,
                        "watches_per_acq", c.rpcs.watchCreates() / (double) c.acquisitions,
                        "handoffs_over_50ms", over(c.handoffMs, 50),
                        "acquisitions", c.acquisitions);
                if (k == 4) {
                    rpcsAtWait = rpa;
                }
            } finally {
                for (EtcdSession s : sessions) {
                    s.close();
                }
            }
        }
        // Constant from 4 to 64 owners (3 to 63 waiters); K = 1 has nobody to wait for.
        double min = Double.MAX_VALUE;
        double max = 0;
        for (int i = 1; i < perAcq.size(); i++) {
            min = Math.min(min, perAcq.get(i));
            max = Math.max(max, perAcq.get(i));
        }
        boolean flat = max <= min * 1.15;
        report.target("etcd RPCs per handoff vs waiters", "constant (max/min <= 1.15) from K=4 to K=64",
                String.join(", ", perAcqText), flat,
                String.format(Locale.ROOT, "K=1 acquires without waiting (create Txn + delete Txn); from K=4 on every"
                        + " acquisition waits: create Txn (which names the predecessor), a watch on it, one Txn"
                        + " reading the own key and the predecessors after its delete, delete Txn (%.2f at K=4)",
                        rpcsAtWait));
        double worst = perAcq.size() > 1 ? max : Double.NaN;
        report.target("etcd requests per contended acquisition", "<= 4.5 from K=4 to K=64",
                String.join(", ", perAcqText), worst <= 4.5,
                "unary requests plus watch creates per acquisition, the own-key watch reused across acquisitions");
    }

    /** disco's contended throughput against jetcd's server-side Lock at every K, and at K = 64 against the baseline. */
    private void contendedTargets() {
        if (discoAcqPerSec.isEmpty() || jetcdAcqPerSec.isEmpty()) {
            return;
        }
        List<String> text = new ArrayList<>();
        boolean all = true;
        for (int k : discoAcqPerSec.keySet()) {
            Double j = jetcdAcqPerSec.get(k);
            if (j == null) {
                continue;
            }
            double ratio = discoAcqPerSec.get(k) / j;
            all &= ratio >= 1.0;
            text.add(String.format(Locale.ROOT, "K=%d: %.2f (%.0f vs %.0f/s)", k, ratio, discoAcqPerSec.get(k), j));
        }
        report.target("contended acquisitions/s, disco vs jetcd Lock", ">= 1.0 x at K = 1, 4, 16, 64", String.join(", ", text),
                all, "jetcd's Lock runs the queue inside etcd and answers a waiter as the delete commits; a disco waiter"
                        + " learns of the delete from its watch, then reads its own key and the predecessors (one Txn)"
                        + " before lock() returns");
        Double k64 = discoAcqPerSec.get(64);
        if (k64 != null) {
            report.target("contended acquisitions/s at K = 64 vs the issue's baseline", ">= 1.5 x " + (int) K64_BEFORE + "/s",
                    String.format(Locale.ROOT, "%.0f/s = %.2f x", k64, k64 / K64_BEFORE), k64 >= 1.5 * K64_BEFORE,
                    "the baseline was measured on the machine that filed the issue; compare on one machine");
        }
    }

    /** Semaphore hand-overs: etcd requests per acquisition as the limit and the number of owners grow. */
    private void semaphore() throws Exception {
        log("2. semaphore: limit 1, 2, 4 with 8 and 32 owners");
        List<String> text = new ArrayList<>();
        for (int limit : new int[] {1, 2, 4}) {
            for (int k : new int[] {8, 32}) {
                List<EtcdSession> sessions = new ArrayList<>();
                List<Owner> owners = new ArrayList<>();
                String prefix = root + "/s/sem-" + limit + "-" + k;
                try {
                    for (int i = 0; i < k; i++) {
                        EtcdSession s = EtcdSession.open(client, EtcdOptions.defaults());
                        sessions.add(s);
                        SemaphoreService sem = s.newSemaphore(prefix, limit);
                        owners.add(new Owner() {
                            @Override
                            public void lock() throws Exception {
                                sem.acquire();
                            }

                            @Override
                            public void unlock() {
                                sem.release();
                            }
                        });
                    }
                    runContended(owners.subList(0, 1), 5);
                    Contended c = runContended(owners, cyclesPerOwner(k));
                    long kv = c.rpcs.calls("KV/");
                    double rpa = (kv + c.rpcs.watchCreates()) / (double) c.acquisitions;
                    text.add(String.format(Locale.ROOT, "limit %d, %d owners: %.2f", limit, k, rpa));
                    report.row("2 semaphore", "limit=" + limit + " K=" + k, Double.NaN, Double.NaN, "",
                            "acq_per_s", c.acquisitions / c.seconds, "rpcs_per_acq", rpa,
                            "kv_per_acq", kv / (double) c.acquisitions,
                            "watches_per_acq", c.rpcs.watchCreates() / (double) c.acquisitions,
                            "acquisitions", c.acquisitions);
                } finally {
                    sessions.forEach(EtcdSession::close);
                }
            }
        }
        report.notes.add("semaphore etcd requests per acquisition (the Go algorithm: with limit > 1 every delete under"
                + " the prefix makes every waiter re-count; a permit adds the slot read and claim Txns and the slot"
                + " delete): " + String.join(", ", text));
    }

    private void contendedJetcd() throws Exception {
        log("2. contended handoff, jetcd Lock client: K = 1, 4, 16, 64 owners");
        for (int k : OWNERS) {
            List<Long> leases = new ArrayList<>();
            List<Owner> owners = new ArrayList<>();
            ByteSequence name = bs(root + "/c/jetcd-" + k);
            try {
                for (int i = 0; i < k; i++) {
                    long lease = get(client.getLeaseClient().grant(300)).getID();
                    leases.add(lease);
                    AtomicReference<ByteSequence> key = new AtomicReference<>();
                    owners.add(new Owner() {
                        @Override
                        public void lock() throws Exception {
                            key.set(get(client.getLockClient().lock(name, lease)).getKey());
                        }

                        @Override
                        public void unlock() throws Exception {
                            get(client.getLockClient().unlock(key.get()));
                        }
                    });
                }
                runContended(owners.subList(0, 1), 5);
                Contended c = runContended(owners, cyclesPerOwner(k));
                long calls = c.rpcs.calls("Lock/") + c.rpcs.calls("KV/") + c.rpcs.watchCreates();
                jetcdAcqPerSec.put(k, c.acquisitions / c.seconds);
                report.row("2 contended jetcd Lock", "K=" + k + " handoff", Stats.median(c.handoffMs), Stats.p99(c.handoffMs), "ms",
                        "acq_per_s", c.acquisitions / c.seconds, "unlock_ms", Stats.median(c.holdMs),
                        "rpcs_per_acq", calls / (double) c.acquisitions, "handoffs_over_50ms", over(c.handoffMs, 50),
                        "acquisitions", c.acquisitions);
            } finally {
                for (long l : leases) {
                    client.getLeaseClient().revoke(l).get(10, TimeUnit.SECONDS);
                }
            }
        }
        report.notes.add("jetcd Lock RPCs are client-visible calls only: etcd runs the same queue recipe server-side"
                + " inside one blocking Lock RPC, so its waiter is answered as the delete commits; a disco waiter"
                + " learns of the delete from its watch and then reads its own key and the predecessors in one Txn"
                + " before lock() returns: that is its longer handoff");
        report.notes.add("handoff = next owner's lock() return - previous owner's unlock() return (can be ~0 or"
                + " negative when the grant arrives before the releaser's unlock() returns); unlock_ms = median unlock()"
                + " call, since nothing is done while held");
    }

    /**
     * The cause of the slow handoffs: etcd puts a watcher whose start revision is not above its
     * current revision into the "unsynced" group, which a loop catches up every 100 ms; a delete
     * that happens meanwhile reaches the watcher only then. Both disco and etcd's own lock watch the
     * predecessor from the revision of the read that found it. Measured here: delete to event,
     * watch started at that read's revision vs at the revision after it.
     */
    private void watchDelivery() throws Exception {
        int n = quick ? 20 : 60;
        log("2. watch delivery: delete -> event, watch from the read's revision vs revision + 1, %d each", n);
        double[][] samples = new double[2][n];
        ByteSequence key = bs(root + "/w/key");
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < 2; j++) {
                int v = (i + j) % 2;
                get(client.getKVClient().put(key, EMPTY));
                long rev = get(client.getKVClient().get(key)).getHeader().getRevision();
                java.util.concurrent.CompletableFuture<Long> event = new java.util.concurrent.CompletableFuture<>();
                io.etcd.jetcd.options.WatchOption opt = io.etcd.jetcd.options.WatchOption.builder()
                        .withRevision(v == 0 ? rev : rev + 1).withNoPut(true).build();
                try (io.etcd.jetcd.Watch.Watcher w = client.getWatchClient().watch(key, opt,
                        r -> event.complete(System.nanoTime()))) {
                    Thread.sleep(5); // the watch is created; a short queue hands off a few ms later
                    get(client.getKVClient().delete(key));
                    long deleted = System.nanoTime();
                    samples[v][i] = Stats.ms(event.get(10, TimeUnit.SECONDS) - deleted);
                }
            }
        }
        report.row("2 watch delivery", "delete -> event, watch from read's revision", Stats.median(samples[0]),
                Stats.p99(samples[0]), "ms");
        report.row("2 watch delivery", "delete -> event, watch from revision + 1", Stats.median(samples[1]),
                Stats.p99(samples[1]), "ms");
        report.notes.add("slow handoffs (handoffs_over_50ms): a watch that starts at or below etcd's current revision"
                + " is 'unsynced' and gets its events only at etcd's next 100 ms catch-up (see '2 watch delivery')."
                + " jetcd's Lock (etcd's server-side recipe) watches from the read's revision and pays it at small K;"
                + " disco watches the predecessor from etcd's current revision (synced at once) and re-reads it once"
                + " when the watch started after the read: that re-read is the ~0.2 extra KV RPCs per acquisition");
    }

    // ------------------------------------------------------------------ 3. read/write lock

    private void rwlock() throws Exception {
        long windowMs = quick ? 1_500 : 6_000;
        int readers = 8;
        log("3. read/write lock: %d readers with 0, 1, 2 writers, %.1f s each", readers, windowMs / 1e3);
        for (int writers = 0; writers <= 2; writers++) {
            String prefix = root + "/rw/" + writers;
            List<EtcdSession> sessions = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            java.util.concurrent.atomic.LongAdder reads = new java.util.concurrent.atomic.LongAdder();
            java.util.concurrent.atomic.LongAdder writes = new java.util.concurrent.atomic.LongAdder();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            try {
                for (int i = 0; i < readers + writers; i++) {
                    EtcdSession s = EtcdSession.open(client, EtcdOptions.defaults());
                    sessions.add(s);
                    io.disco.rwlock.RWLockService svc = s.newRWLock(prefix);
                    boolean reader = i < readers;
                    Thread t = new Thread(() -> {
                        try {
                            start.await();
                            while (!stop.get()) {
                                if (reader) {
                                    svc.rLock();
                                    svc.rUnlock();
                                    reads.increment();
                                } else {
                                    svc.lock();
                                    svc.unlock();
                                    writes.increment();
                                }
                            }
                        } catch (Throwable e) {
                            if (!stop.get()) {
                                failure.compareAndSet(null, e);
                            }
                        }
                    }, "bench-rw");
                    t.setDaemon(true);
                    threads.add(t);
                    t.start();
                }
                long t0 = System.nanoTime();
                start.countDown();
                Thread.sleep(windowMs);
                stop.set(true);
                double secs = (System.nanoTime() - t0) / 1e9;
                double r = reads.sum() / secs;
                double w = writes.sum() / secs;
                for (Thread t : threads) {
                    t.join(30_000);
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("read/write lock run failed", failure.get());
                }
                report.row("3 rwlock", readers + " readers, " + writers + " writers", Double.NaN, Double.NaN, "",
                        "reads_per_s", r, "writes_per_s", w);
            } finally {
                for (EtcdSession s : sessions) {
                    s.close();
                }
            }
        }
    }

    // ------------------------------------------------------------------ 4. election failover

    /**
     * Failover, median over N terms: from the leader's {@code resign()} returning, and from its lease
     * being revoked (a lease loss at a known instant), to the next candidate's {@code campaign()} returning.
     */
    private void election() throws Exception {
        int n = quick ? 8 : 20;
        log("4. election failover: resign -> next leader, lease loss -> next leader, %d terms each", n);
        for (boolean loss : new boolean[] {false, true}) {
            String prefix = root + "/election/" + (loss ? "loss" : "resign");
            List<Double> ms = new ArrayList<>();
            EtcdSession leaderSession = EtcdSession.open(client, EtcdOptions.defaults());
            io.disco.election.ElectionService leader = leaderSession.newElection(prefix);
            leader.campaign("leader-0");
            try {
                for (int i = 1; i <= n; i++) {
                    EtcdSession nextSession = EtcdSession.open(client, EtcdOptions.defaults());
                    io.disco.election.ElectionService next = nextSession.newElection(prefix);
                    java.util.concurrent.CompletableFuture<Long> won = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            next.campaign("leader-" + System.nanoTime());
                            return System.nanoTime();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    // The next candidate must be queued (its key written) before the term ends.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (client.getKVClient().get(bs(prefix + "/"), GetOption.builder().isPrefix(true).withCountOnly(true).build())
                            .get(5, TimeUnit.SECONDS).getCount() < 2) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("candidate did not queue");
                        }
                        Thread.onSpinWait();
                    }
                    long ended;
                    if (loss) {
                        ended = System.nanoTime();
                        client.getLeaseClient().revoke(leaderSession.leaseId()).get(10, TimeUnit.SECONDS);
                    } else {
                        leader.resign();
                        ended = System.nanoTime();
                    }
                    ms.add((won.get(30, TimeUnit.SECONDS) - ended) / 1e6);
                    leaderSession.close();
                    leaderSession = nextSession;
                    leader = next;
                }
            } finally {
                leaderSession.close();
            }
            double[] samples = ms.stream().mapToDouble(Double::doubleValue).toArray();
            report.row("4 election", loss ? "lease loss (revoke) -> next leader" : "resign() -> next leader",
                    Stats.median(samples), Stats.p99(samples), "ms", "terms", n);
        }
    }

    // ------------------------------------------------------------------ 6. sessions

    static long usedHeap() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            best = Math.min(best, rt.totalMemory() - rt.freeMemory());
        }
        return best;
    }

    private void sessions() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        long windowMs = quick ? 6_000 : 15_000;
        EtcdOptions opts = EtcdOptions.builder().ttl(ttl).build();
        log("6. sessions: 1000 services on one session, 100 services with a session each; TTL %d s, window %.0f s",
                ttl.toSeconds(), windowMs / 1e3);

        // A: 1000 services on one shared session
        int nA = 1000;
        List<LockService> svcA = new ArrayList<>();
        long heap0 = usedHeap();
        RpcCounter.Snapshot a0 = counter.snapshot();
        EtcdSession shared = EtcdSession.open(client, opts);
        double rateA;
        long grantsA;
        double heapA;
        try {
            for (int i = 0; i < nA; i++) {
                svcA.add(shared.newLock(root + "/s/shared/" + i));
            }
            grantsA = counter.snapshot().minus(a0).calls("Lease/LeaseGrant");
            heapA = (usedHeap() - heap0) / (double) nA;
            rateA = keepalivesPerSecond(windowMs);
        } finally {
            closeAll(svcA);
            shared.close();
        }

        // B: 100 services, one session each
        int nB = 100;
        List<LockService> svcB = new ArrayList<>();
        long heap1 = usedHeap();
        RpcCounter.Snapshot b0 = counter.snapshot();
        double rateB;
        long grantsB;
        double heapB;
        try {
            for (int i = 0; i < nB; i++) {
                svcB.add(EtcdProvider.newLock(client, root + "/s/own/" + i, opts));
            }
            grantsB = counter.snapshot().minus(b0).calls("Lease/LeaseGrant");
            heapB = (usedHeap() - heap1) / (double) nB;
            rateB = keepalivesPerSecond(windowMs);
        } finally {
            closeAll(svcB);
        }

        report.row("6 sessions", "1000 services, 1 shared session", Double.NaN, Double.NaN, "",
                "leases", grantsA, "keepalives_per_s", rateA, "heap_bytes_per_service", heapA);
        report.row("6 sessions", "100 services, 1 session each", Double.NaN, Double.NaN, "",
                "leases", grantsB, "keepalives_per_s", rateB, "heap_bytes_per_service", heapB);
        double perSessionB = rateB / nB;
        boolean independent = grantsA == 1 && rateA <= perSessionB * 1.5 + 0.2;
        report.target("keepalives vs services on one session", "1000 services renew like one (1 lease, ~3/TTL per s)",
                String.format(Locale.ROOT, "1000 services on 1 session: %d lease, %.2f keepalives/s;"
                        + " one session of 1 service: %.2f/s (100 sessions: %.1f/s)", grantsA, rateA, perSessionB, rateB),
                independent, independent ? "" : "see keepalives_per_s above");
    }

    double keepalivesPerSecond(long windowMs) throws InterruptedException {
        RpcCounter.Snapshot k0 = counter.snapshot();
        long t0 = System.nanoTime();
        Thread.sleep(windowMs);
        RpcCounter.Snapshot k = counter.snapshot().minus(k0);
        return k.calls("Lease/LeaseKeepAlive") / ((System.nanoTime() - t0) / 1e9);
    }

    private static void closeAll(Collection<LockService> services) {
        for (LockService s : services) {
            s.close();
        }
    }

    // ------------------------------------------------------------------ 5. guard: HTTP filter on Jetty

    /** The servlet measured with and without the filter: answers "ok". */
    static final class OkServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.getWriter().print("ok");
        }
    }

    private void guardFilter() throws Exception {
        int warm = quick ? 300 : 2000;
        int n = quick ? 600 : 5000;
        log("5. GuardFilter on Jetty: %d warm-up + %d interleaved requests per variant", warm, n);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler ctx = new ServletContextHandler();
        ctx.setContextPath("/");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/plain/*");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/guarded/*");
        ctx.addFilter(new FilterHolder(new GuardFilter(Guard.create())), "/guarded/*", EnumSet.of(DispatcherType.REQUEST));
        server.setHandler(ctx);
        server.start();
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String base = "http://127.0.0.1:" + connector.getLocalPort();
            HttpRequest[] reqs = {
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/plain/x")), FencingToken.of(7)).GET().build(),
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/guarded/x")), FencingToken.of(7)).GET().build(),
            };
            double[][] samples = new double[2][n];
            for (int i = 0; i < warm + n; i++) {
                for (int j = 0; j < 2; j++) {
                    int v = (i + j) % 2;
                    long s = System.nanoTime();
                    HttpResponse<String> r = http.send(reqs[v], HttpResponse.BodyHandlers.ofString());
                    long e = System.nanoTime();
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("HTTP " + r.statusCode() + ": " + r.body());
                    }
                    if (i >= warm) {
                        samples[v][i - warm] = Stats.ms(e - s);
                    }
                }
            }
            double mp = Stats.median(samples[0]);
            double mg = Stats.median(samples[1]);
            report.row("5 guard", "Jetty servlet, no filter", mp, Stats.p99(samples[0]), "ms");
            report.row("5 guard", "Jetty servlet + GuardFilter", mg, Stats.p99(samples[1]), "ms",
                    "vs_no_filter", mg / mp, "added_us", (mg - mp) * 1000);
            double addedUs = (mg - mp) * 1000;
            report.target("GuardFilter (ordered admission) over no filter, Jetty", "<= 5 us added per request",
                    String.format(Locale.ROOT, "+%.1f us (%.3f ms vs %.3f ms, medians)", addedUs, mg, mp),
                    addedUs <= 5, addedUs <= 5 ? "" : "the filter parses the header and admits under the guard");
        } finally {
            server.stop();
        }
    }

    // ------------------------------------------------------------------ 5. guard: JMH

    /** Runs the named methods of {@link GuardBenchmark} with {@code threads} threads; the median ops/s of each. */
    private Map<String, double[]> jmh(int threads, String... methods) throws Exception {
        Path out = Files.createTempFile("disco-jmh", ".txt");
        try {
            OptionsBuilder ob = new OptionsBuilder();
            ob.include(GuardBenchmark.class.getName() + "\\.(" + String.join("|", methods) + ")$")
                    .threads(threads)
                    .forks(1)
                    .mode(org.openjdk.jmh.annotations.Mode.Throughput)
                    .timeUnit(TimeUnit.SECONDS)
                    .warmupIterations(quick ? 2 : 3)
                    .warmupTime(TimeValue.milliseconds(quick ? 200 : 1000))
                    .measurementIterations(quick ? 5 : 8)
                    .measurementTime(TimeValue.milliseconds(quick ? 200 : 1000))
                    .jvmArgs("-Xmx128m")
                    .output(out.toString());
            Map<String, double[]> scores = new LinkedHashMap<>();
            for (RunResult r : new Runner(ob.build()).run()) {
                String label = r.getParams().getBenchmark();
                scores.put(label.substring(label.lastIndexOf('.') + 1), new double[] {
                    r.getPrimaryResult().getStatistics().getPercentile(50), r.getPrimaryResult().getScoreError()});
            }
            return scores;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private void guardJmh() throws Exception {
        log("5. Guard.check, Guard.admit and AtomicLong.get(), JMH, 1, 2 and 8 threads (%s)",
                quick ? "short iterations" : "full iterations");
        Map<String, String> names = Map.of("guardCheckEqualToken", "Guard.check (equal token)",
                "guardAdmitEqualToken", "Guard.admit + close (equal token)",
                "plainAtomicLongGet", "AtomicLong.get()",
                "guardAdmitAdvancing", "Guard.admit + close, token advancing every "
                        + GuardBenchmark.REQUESTS_PER_TOKEN + " requests");
        Map<Integer, Map<String, double[]>> byThreads = new LinkedHashMap<>();
        byThreads.put(1, jmh(1, "guardCheckEqualToken", "guardAdmitEqualToken", "plainAtomicLongGet"));
        byThreads.put(2, jmh(2, "guardCheckEqualToken", "guardAdmitEqualToken", "plainAtomicLongGet"));
        byThreads.put(8, jmh(8, "guardAdmitEqualToken", "guardAdmitAdvancing"));
        byThreads.forEach((threads, scores) -> scores.forEach((method, s) -> report.row("5 guard",
                names.get(method) + ", " + threads + (threads == 1 ? " thread" : " threads"), Double.NaN, Double.NaN, "",
                "ops_per_s", s[0], "ns_per_op", 1e9 / s[0], "error_99.9", s[1])));
        Map<String, double[]> one = byThreads.get(1);
        double guard = one.get("guardCheckEqualToken")[0];
        double plain = one.get("plainAtomicLongGet")[0];
        double ratio = guard / plain;
        report.target("guard vs plain read, 1 thread", "guard >= plain / 1.2",
                String.format(Locale.ROOT, "guard %.3g ops/s = %.2f x plain %.3g ops/s", guard, ratio, plain),
                ratio >= 1 / 1.2,
                ratio >= 1 / 1.2 ? "" : (Math.abs(guard - plain) <= one.get("guardCheckEqualToken")[1]
                        + one.get("plainAtomicLongGet")[1]
                        ? "the difference is within JMH's 99.9% error bars on this machine (not resolved by this run);"
                        : "resolved beyond JMH's error bars;")
                        + " per call the guard loads the token's value and compares it after the same volatile read,"
                        + " at about 1 ns per call either way");
        double added = 1e9 / one.get("guardAdmitEqualToken")[0] - 1e9 / guard;
        report.target("admission over check, equal token, 1 thread", "<= 50 ns added",
                String.format(Locale.ROOT, "+%.1f ns (admit + close %.1f ns, check %.1f ns)", added,
                        1e9 / one.get("guardAdmitEqualToken")[0], 1e9 / guard),
                added <= 50, added <= 50 ? "" : "the admission counts in and out on one shared counter");
        Map<String, double[]> eight = byThreads.get(8);
        report.notes.add(String.format(Locale.ROOT, "8 threads on 2 cores: equal-token admissions %.3g ops/s, token advancing"
                + " every %d requests %.3g ops/s (%.2f x)", eight.get("guardAdmitEqualToken")[0],
                GuardBenchmark.REQUESTS_PER_TOKEN, eight.get("guardAdmitAdvancing")[0],
                eight.get("guardAdmitAdvancing")[0] / eight.get("guardAdmitEqualToken")[0]));
    }

    // ------------------------------------------------------------------ 5. guard: memory per key

    private void keyedGuardMemory() {
        int keys = quick ? 20_000 : 100_000;
        log("5. KeyedGuard: heap per idle key, %d keys with one accepted token each", keys);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        KeyedGuard guards = KeyedGuard.create();
        long before = usedAfterGc(memory);
        for (int i = 0; i < keys; i++) {
            guards.forKey("tenant-" + i).check(FencingToken.of(i + 1L));
        }
        long after = usedAfterGc(memory);
        long keyStrings = 0;
        for (int i = 0; i < keys; i++) {
            keyStrings += 24 + 16 + ("tenant-" + i).length(); // String + byte[] header + Latin-1 bytes
        }
        double perKey = (after - before) / (double) keys;
        report.row("5 guard", "KeyedGuard, heap per idle key (incl. its key string, ~"
                + Math.round(keyStrings / (double) keys) + " B)", perKey, Double.NaN, "B", "keys", guards.size());
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
