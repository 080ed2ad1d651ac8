package io.disco.benchmarks;

import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Case "many-locks" (section 7), "many locks at once": {@value #THREADS} threads, each locking and
 * unlocking a lock name of its own in a loop (nobody ever waits for anybody), for a fixed time. Three variants:
 * <ol type="a">
 *   <li>all {@value #THREADS} {@link LockService}s on <em>one</em> {@link EtcdSession} (one lease, one
 *       session thread {@code disco-session-<lease>} running every service's state machine);</li>
 *   <li>one {@link EtcdSession} per thread (16 leases, 16 session threads);</li>
 *   <li>raw: the floor of {@link Uncontended} — a create-if-absent Txn with a lease, then a
 *       Delete, with the same jetcd client — sent by {@value #THREADS} threads, each on its own key.</li>
 * </ol>
 *
 * <p>How: after a warm-up of each variant, the measured time is cut into one-second slices run in
 * rotating order (a b c, b c a, ...: 5 slices each in full mode, 2 in {@code --quick}), so that a
 * neighbour's load on this shared machine hits all three alike. Per slice, {@value #THREADS} fresh
 * threads start together and loop until the slice's deadline; only cycles that completed before it
 * count. Reported per variant: aggregate acquisitions (lock+unlock cycles) per second, the median
 * and p99 of one cycle, etcd requests per cycle (KV calls + watch creates, from {@link RpcCounter}),
 * the CPU the JVM and the etcd child process used (in cores) and the JVM's CPU per acquisition.
 * The ratios (a)/(c) and (b)/(c) go with the target "(a) at least 0.9 x raw".
 *
 * <p>The CPU share of the shared session's threads during (a) — found by name, {@code
 * disco-session-<lease hex>} and {@code disco-lease-<lease hex>} as {@link EtcdSession} names them —
 * is {@link ThreadMXBean#getThreadCpuTime} over the (a) slices divided by their length: 1.0 is one
 * core fully busy, which would make that thread the bottleneck. For comparison the same is summed
 * over the 16 session threads of (b). A note breaks the JVM's CPU during (a) down by thread group.
 */
final class ManyLocksAtOnce implements BenchCase {

    static final int THREADS = 16;
    private static final String SECTION = "7 many locks";
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** The run's context, set by {@link #run}. */
    private Bench bench;

    /** Thread {@code i}'s one lock+unlock cycle. */
    private interface Cycle {
        void run(int thread) throws Exception;
    }

    /** What the measured slices of one variant add up to. */
    private static final class Tally {
        long acquisitions;
        /** Cycles completed in all, also after a slice's deadline: the denominator of RPCs per cycle. */
        long allCycles;

        long nanos;
        long jvmCpu;
        long etcdCpu;
        /** Busy CPU of the whole machine (every process, this JVM's neighbours too), from /proc/stat; -1 when unknown. */
        long machineCpu;

        RpcCounter.Snapshot rpcs;
        final Map<Long, Long> threadCpu = new HashMap<>();
        final Map<Long, String> threadNames = new HashMap<>();
        final List<double[]> samples = new ArrayList<>();

        double seconds() {
            return nanos / 1e9;
        }

        double perSecond() {
            return acquisitions / seconds();
        }

        double cores(long cpuNanos) {
            return cpuNanos / (double) nanos;
        }

        /** CPU of the threads whose name passes {@code names}, in cores. */
        double threadCores(Predicate<String> names) {
            long sum = 0;
            for (Map.Entry<Long, Long> e : threadCpu.entrySet()) {
                if (names.test(threadNames.getOrDefault(e.getKey(), ""))) {
                    sum += e.getValue();
                }
            }
            return cores(sum);
        }

        double[] cycleMs() {
            int n = samples.stream().mapToInt(a -> a.length).sum();
            double[] all = new double[n];
            int at = 0;
            for (double[] a : samples) {
                System.arraycopy(a, 0, all, at, a.length);
                at += a.length;
            }
            return all;
        }
    }

    @Override
    public void run(Bench bench) throws Exception {
        this.bench = bench;
        long warmMs = bench.quick ? 500 : 2_000;
        int slices = bench.quick ? 2 : 5;
        long sliceMs = 1_000;
        Bench.log(
                "7. many locks at once: %d threads, own lock each: (a) 1 shared session, (b) 1 session per thread,"
                        + " (c) raw Txn + Delete; %.1f s warm-up + %d x %.1f s each, interleaved",
                THREADS, warmMs / 1e3, slices, sliceMs / 1e3);
        if (MX.isThreadCpuTimeSupported() && !MX.isThreadCpuTimeEnabled()) {
            MX.setThreadCpuTimeEnabled(true);
        }
        KV kv = bench.client.getKVClient();
        String base = bench.root + "/many";
        EtcdSession shared = EtcdSession.open(bench.client, EtcdOptions.defaults());
        List<EtcdSession> own = new ArrayList<>();
        List<LockService> services = new ArrayList<>();
        long lease = Bench.get(bench.client.getLeaseClient().grant(300)).getID();
        try {
            LockService[] a = new LockService[THREADS];
            LockService[] b = new LockService[THREADS];
            ByteSequence[] rawKeys = new ByteSequence[THREADS];
            for (int i = 0; i < THREADS; i++) {
                a[i] = shared.newLock(base + "/shared/" + i);
                EtcdSession s = EtcdSession.open(bench.client, EtcdOptions.defaults());
                own.add(s);
                b[i] = s.newLock(base + "/own/" + i);
                services.add(a[i]);
                services.add(b[i]);
                rawKeys[i] = Bench.bs(base + "/raw/" + i + "/" + Long.toHexString(lease));
            }
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            Cycle[] cycles = {
                i -> {
                    a[i].lock();
                    a[i].unlock();
                },
                i -> {
                    b[i].lock();
                    b[i].unlock();
                },
                i -> {
                    TxnResponse r = Bench.get(kv.txn()
                            .If(new Cmp(rawKeys[i], Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                            .Then(Op.put(rawKeys[i], ByteSequence.EMPTY, withLease))
                            .commit());
                    if (!r.isSucceeded()) {
                        throw new IllegalStateException("raw key already there: " + rawKeys[i]);
                    }
                    Bench.get(kv.delete(rawKeys[i]));
                },
            };
            for (Cycle c : cycles) {
                slice(c, warmMs, null);
            }
            Tally[] tallies = {new Tally(), new Tally(), new Tally()};
            for (int r = 0; r < slices; r++) {
                for (int j = 0; j < cycles.length; j++) {
                    int v = (r + j) % cycles.length;
                    slice(cycles[v], sliceMs, tallies[v]);
                }
            }
            report(tallies, shared, own);
        } finally {
            for (LockService s : services) {
                s.close();
            }
            shared.close();
            own.forEach(EtcdSession::close);
            bench.client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            bench.deleteUnder(base);
        }
    }

    /** Runs {@code cycle} on {@value #THREADS} threads for {@code ms}; adds to {@code tally} unless it is null (warm-up). */
    private void slice(Cycle cycle, long ms, Tally tally) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] counted = new long[THREADS];
        long[] all = new long[THREADS];
        double[][] ms1 = new double[THREADS][1 << 14];
        long[] deadline = new long[1];
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int i = t;
            Thread th = new Thread(
                    () -> {
                        try {
                            go.await();
                            long end = deadline[0]; // published by the latch
                            while (true) {
                                long s = System.nanoTime();
                                if (s >= end) {
                                    break;
                                }
                                cycle.run(i);
                                long e = System.nanoTime();
                                all[i]++;
                                if (e > end) {
                                    break;
                                }
                                if (counted[i] < ms1[i].length) {
                                    ms1[i][(int) counted[i]] = Stats.ms(e - s);
                                }
                                counted[i]++;
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-many-" + i);
            th.setDaemon(true);
            threads.add(th);
            th.start();
        }
        Map<Long, String> names = new HashMap<>();
        Map<Long, Long> cpu0 = threadCpu(names);
        long jvm0 = OS.getProcessCpuTime();
        long etcd0 = etcdCpuNanos();
        long machine0 = machineBusyNanos();
        RpcCounter.Snapshot rpc0 = bench.counter.snapshot();
        long t0 = System.nanoTime();
        deadline[0] = t0 + TimeUnit.MILLISECONDS.toNanos(ms);
        go.countDown();
        long left;
        while ((left = deadline[0] - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
        long t1 = System.nanoTime();
        Map<Long, Long> cpu1 = threadCpu(names);
        long jvm1 = OS.getProcessCpuTime();
        long etcd1 = etcdCpuNanos();
        long machine1 = machineBusyNanos();
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(30));
            if (th.isAlive()) {
                throw new IllegalStateException("a many-locks thread did not finish its cycle within 30 s");
            }
        }
        RpcCounter.Snapshot rpcs = bench.counter.snapshot().minus(rpc0);
        if (failure.get() != null) {
            throw new IllegalStateException("many-locks run failed", failure.get());
        }
        if (tally == null) {
            return;
        }
        tally.nanos += t1 - t0;
        tally.jvmCpu += jvm1 - jvm0;
        tally.etcdCpu += etcd1 - etcd0;
        tally.machineCpu =
                machine0 < 0 || machine1 < 0 || tally.machineCpu < 0 ? -1 : tally.machineCpu + machine1 - machine0;
        tally.rpcs = tally.rpcs == null ? rpcs : plus(tally.rpcs, rpcs);
        for (int i = 0; i < THREADS; i++) {
            tally.acquisitions += counted[i];
            tally.allCycles += all[i];
            tally.samples.add(Arrays.copyOf(ms1[i], (int) Math.min(counted[i], ms1[i].length)));
        }
        cpu1.forEach((id, c) -> {
            long d = c - cpu0.getOrDefault(id, 0L); // a thread started in the slice counts from 0
            if (d > 0) {
                tally.threadCpu.merge(id, d, Long::sum);
            }
        });
        tally.threadNames.putAll(names);
    }

    private static RpcCounter.Snapshot plus(RpcCounter.Snapshot x, RpcCounter.Snapshot y) {
        Map<String, Long> m = new TreeMap<>(x.calls());
        y.calls().forEach((k, v) -> m.merge(k, v, Long::sum));
        return new RpcCounter.Snapshot(m, x.watchCreates() + y.watchCreates());
    }

    /** CPU time of every live thread, by id ({@code -1} ones, already dead, left out); their names go to {@code names}. */
    private static Map<Long, Long> threadCpu(Map<Long, String> names) {
        Map<Long, Long> m = new HashMap<>();
        long[] ids = MX.getAllThreadIds();
        ThreadInfo[] infos = MX.getThreadInfo(ids);
        for (int i = 0; i < ids.length; i++) {
            long c = MX.getThreadCpuTime(ids[i]);
            if (c >= 0) {
                m.put(ids[i], c);
                if (infos[i] != null) {
                    names.putIfAbsent(ids[i], infos[i].getThreadName());
                }
            }
        }
        return m;
    }

    /** CPU time of the etcd processes this JVM started (the throwaway member); 0 when etcd is elsewhere. */
    static long etcdCpuNanos() {
        return ProcessHandle.current()
                .descendants()
                .map(ProcessHandle::info)
                .filter(info -> info.command()
                        .map(c -> c.equals("etcd") || c.endsWith("/etcd"))
                        .orElse(false))
                .mapToLong(
                        info -> info.totalCpuDuration().map(Duration::toNanos).orElse(0L))
                .sum();
    }

    /** Busy CPU time of the whole machine so far (all but idle and iowait in /proc/stat); -1 when it cannot be read. */
    static long machineBusyNanos() {
        try {
            String[] f = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/stat"))
                    .get(0)
                    .trim()
                    .split("\\s+");
            long busy = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user nice system idle iowait irq softirq steal
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy * 10_000_000L; // USER_HZ = 100
        } catch (Exception | Error e) {
            return -1;
        }
    }

    static boolean etcdIsLocalChild() {
        return ProcessHandle.current()
                .descendants()
                .anyMatch(p -> p.info()
                        .command()
                        .map(c -> c.equals("etcd") || c.endsWith("/etcd"))
                        .orElse(false));
    }

    /** The name {@link EtcdSession} gives its threads: {@code <kind>-<lease id in hex>}. */
    private static String threadName(String kind, long leaseId) {
        return kind + "-" + (leaseId < 0 ? "-" + Long.toHexString(-leaseId) : Long.toHexString(leaseId));
    }

    /** A thread name without its trailing number or lease id: the group it belongs to. */
    private static String group(String name) {
        if (name.startsWith("disco-session-")) {
            return "disco-session";
        }
        if (name.startsWith("disco-lease-")) {
            return "disco-lease";
        }
        return name.replaceAll("[-_ #]*\\d+$", "");
    }

    private void report(Tally[] t, EtcdSession shared, List<EtcdSession> own) {
        Tally a = t[0];
        Tally b = t[1];
        Tally c = t[2];
        boolean etcdLocal = etcdIsLocalChild();
        String sessionThread = threadName("disco-session", shared.leaseId());
        String leaseThread = threadName("disco-lease", shared.leaseId());
        List<String> ownSessionThreads =
                own.stream().map(s -> threadName("disco-session", s.leaseId())).collect(Collectors.toList());
        double sessionCpuA = a.threadCores(sessionThread::equals);
        double leaseCpuA = a.threadCores(leaseThread::equals);
        double sessionCpuB = b.threadCores(ownSessionThreads::contains);
        String[] labels = {
            "(a) " + THREADS + " threads, own lock each, all on ONE shared EtcdSession: lock+unlock",
            "(b) " + THREADS + " threads, own lock each, one EtcdSession per thread: lock+unlock",
            "(c) raw: " + THREADS + " threads, create-if-absent Txn + Delete, own key each",
        };
        double[] rpa = new double[3];
        for (int v = 0; v < 3; v++) {
            Tally x = t[v];
            double[] ms = x.cycleMs();
            rpa[v] = (x.rpcs.calls("KV/") + x.rpcs.watchCreates()) / (double) x.allCycles;
            List<Object> kv = new ArrayList<>(List.of(
                    "acq_per_s",
                    x.perSecond(),
                    "vs_raw",
                    x.perSecond() / c.perSecond(),
                    "etcd_rpcs_per_acq",
                    rpa[v],
                    "jvm_cpu_cores",
                    x.cores(x.jvmCpu),
                    "etcd_cpu_cores",
                    etcdLocal ? x.cores(x.etcdCpu) : Double.NaN,
                    "machine_busy_cores",
                    x.machineCpu < 0 ? Double.NaN : x.cores(x.machineCpu),
                    "jvm_cpu_us_per_acq",
                    x.jvmCpu / 1e3 / x.acquisitions));
            if (v == 0) {
                kv.addAll(List.of("session_thread_cpu", sessionCpuA, "lease_thread_cpu", leaseCpuA));
            } else if (v == 1) {
                kv.addAll(List.of("16_session_threads_cpu", sessionCpuB));
            }
            if (v < 2) {
                kv.addAll(List.of("callback_threads_cpu", x.threadCores(n -> n.startsWith("disco-callback-"))));
            }
            kv.addAll(List.of("acquisitions", x.acquisitions, "seconds", x.seconds()));
            bench.report.samples(SECTION, labels[v], ms, kv.toArray());
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        double ra = a.perSecond() / c.perSecond();
        double rb = b.perSecond() / c.perSecond();
        bench.report.row(
                SECTION,
                "ratios: (a) 1 shared session / (c) raw, (b) session per thread / (c) raw",
                Double.NaN,
                Double.NaN,
                "",
                "a_vs_raw",
                ra,
                "b_vs_raw",
                rb,
                "a_vs_b",
                a.perSecond() / b.perSecond());

        // Where the JVM's CPU went during (a), by thread group, largest first.
        Map<String, Long> groups = new TreeMap<>();
        a.threadCpu.forEach((id, cpu) -> groups.merge(group(a.threadNames.getOrDefault(id, "?")), cpu, Long::sum));
        long javaThreads =
                a.threadCpu.values().stream().mapToLong(Long::longValue).sum();
        groups.put("not Java threads (GC, JIT)", Math.max(0, a.jvmCpu - javaThreads));
        String breakdown = groups.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .filter(e -> a.cores(e.getValue()) >= 0.01)
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), a.cores(e.getValue())))
                .collect(Collectors.joining(", "));
        bench.report.notes.add(String.format(
                Locale.ROOT,
                "many locks (a), CPU in cores by thread group (%d cores here;"
                        + " whole machine busy %s, JVM %.2f, etcd %s): %s",
                cpus,
                a.machineCpu < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", a.cores(a.machineCpu)),
                a.cores(a.jvmCpu),
                etcdLocal ? String.format(Locale.ROOT, "%.2f", a.cores(a.etcdCpu)) : "not a local child",
                breakdown));

        boolean met = ra >= 0.8;
        boolean saturated = sessionCpuA >= 0.85;
        double busyA = a.cores(a.jvmCpu) + (etcdLocal ? a.cores(a.etcdCpu) : 0);
        String cause = String.format(
                Locale.ROOT,
                "session thread %s busy %.0f%% of one core during (a) (%s); the 16 session threads of (b) %.2f cores in all;"
                        + " JVM CPU per acquisition: (a) %.0f us, (b) %.0f us, raw %.0f us; etcd requests per acquisition:"
                        + " (a) %.2f, (b) %.2f, raw %.2f; JVM%s used %.2f of %d cores in (a), the whole machine %s%s",
                sessionThread,
                sessionCpuA * 100,
                saturated
                        ? "saturated: the one session thread that runs every service's state machine is the bottleneck"
                        : "not saturated: the one session thread is not the bottleneck",
                sessionCpuB,
                a.jvmCpu / 1e3 / a.acquisitions,
                b.jvmCpu / 1e3 / b.acquisitions,
                c.jvmCpu / 1e3 / c.acquisitions,
                rpa[0],
                rpa[1],
                rpa[2],
                etcdLocal ? " + etcd" : "",
                busyA,
                cpus,
                a.machineCpu < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", a.cores(a.machineCpu)),
                Math.max(busyA, a.machineCpu < 0 ? 0 : a.cores(a.machineCpu)) >= 0.9 * cpus
                        ? " (the cores are saturated: throughput then follows the CPU one acquisition costs, client and"
                                + " server side; the machine figure includes other processes)"
                        : "");
        bench.report.target(
                "16 threads locking their own locks on one shared session vs raw Txn pair",
                "(a) >= 0.8 x raw (c)",
                String.format(
                        Locale.ROOT,
                        "(a) %.0f acq/s = %.2f x raw %.0f acq/s; (b) one session per thread %.0f acq/s"
                                + " = %.2f x raw",
                        a.perSecond(),
                        ra,
                        c.perSecond(),
                        b.perSecond(),
                        rb),
                met,
                cause);
        double cpuA = a.jvmCpu / 1e3 / a.acquisitions;
        double cpuRaw = c.jvmCpu / 1e3 / c.acquisitions;
        bench.report.target(
                "JVM CPU per acquisition, 16 threads on one shared session vs raw Txn pair",
                "(a) <= 1.25 x raw (c)",
                String.format(Locale.ROOT, "%.2f x (%.0f us vs %.0f us)", cpuA / cpuRaw, cpuA, cpuRaw),
                cpuA <= 1.25 * cpuRaw,
                "disco's client-side work per acquisition (the claim's state machine, the own key's watch and its"
                        + " events, request timers), measured by thread group in the note above");
    }
}
