package io.disco.benchmarks;

import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark command: starts a throwaway etcd (or uses {@code DISCO_ETCD_ENDPOINTS}), runs the
 * cases ({@link BenchCase#all()}, one file each) side by side against it with one jetcd client,
 * prints one table and optionally writes it as JSON. An instance is the run's context that every
 * case gets: the mode, the report, the client and its {@link RpcCounter}.
 *
 * <pre>java -cp ... io.disco.benchmarks.Bench [--quick] [--json FILE] [--no-jmh] [--uncontended-only] [--only CASE,...]
 *     [--network loopback|dc] [--rtt-ms MS]</pre>
 *
 * <p>{@code --network dc} measures against a {@link DataCentre}: 3 members with their data on disk and
 * {@code --rtt-ms} (default 0.5) on every link, through proxies; the default, {@code loopback}, against
 * one member on tmpfs reached directly.
 *
 * <p>{@code --only many-locks,scale} runs the named cases alone (in their usual order); the names
 * are those of {@link BenchCase#all()}, listed by {@code --help}. The cases {@code zookeeper} and {@code redis}
 * start servers of their own (an in-process ZooKeeper, a throwaway {@code redis-server}).
 */
public final class Bench {

    /** Set by {@code --quick}: short warm-ups and windows, for a smoke check. */
    final boolean quick;

    final Report report = new Report();
    /** The prefix of every key the cases write, new for each run. */
    final String root = "/disco-bench/" + UUID.randomUUID().toString().substring(0, 8);
    /** The endpoints of the etcd measured against, for a case that needs a second client. */
    List<String> endpoints;
    /** The one client every case measures with; it counts its requests with {@link #counter}. */
    Client client;

    RpcCounter counter;

    /** The round trip of {@code --network dc}, or null for the loopback run. */
    private final Duration dcRtt;

    private Bench(boolean quick, Duration dcRtt) {
        this.quick = quick;
        this.dcRtt = dcRtt;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("bench.log", "warn"));
        List<BenchCase.Listed> all = BenchCase.all();
        List<String> names = all.stream().map(BenchCase.Listed::name).toList();
        boolean quick = false;
        boolean jmh = true;
        boolean uncontendedOnly = false;
        Set<String> only = null;
        Path json = null;
        String network = "loopback";
        Duration rtt = DataCentre.DEFAULT_RTT;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-jmh" -> jmh = false;
                case "--uncontended-only" -> uncontendedOnly = true;
                case "--only" -> {
                    if (i + 1 >= args.length) {
                        usage(names, "--only needs a comma-separated list of cases: " + String.join(",", names));
                    }
                    only = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    for (String c : only) {
                        if (!names.contains(c)) {
                            usage(names, "--only: unknown case '" + c + "'; cases: " + String.join(",", names));
                        }
                    }
                }
                case "--json" -> {
                    if (i + 1 >= args.length) {
                        usage(names, "--json needs a file name");
                    }
                    json = Path.of(args[++i]);
                }
                case "--network" -> {
                    network = i + 1 < args.length ? args[++i] : "";
                    if (!List.of("loopback", "dc").contains(network)) {
                        usage(names, "--network needs loopback or dc, got '" + network + "'");
                    }
                }
                case "--rtt-ms" -> {
                    double ms = i + 1 < args.length ? parseOrNaN(args[++i]) : Double.NaN;
                    if (!(ms >= 0 && ms <= 1000)) {
                        usage(names, "--rtt-ms needs a round trip in milliseconds, 0 to 1000, got " + args[i]);
                    }
                    rtt = Duration.ofNanos(Math.round(ms * 1e6));
                }
                case "-h", "--help" -> usage(names, null);
                default -> usage(names, "unknown argument: " + args[i]);
            }
        }
        List<BenchCase.Listed> cases = select(all, only, uncontendedOnly, jmh);
        long t0 = System.nanoTime();
        Bench b = new Bench(quick, network.equals("dc") ? rtt : null);
        b.run(cases);
        if (!jmh && !uncontendedOnly) {
            b.report.notes.add("JMH guard benchmark skipped (--no-jmh)");
        }
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

    /**
     * The cases to run, in their order: those named by {@code --only} (all when null); with {@code
     * --uncontended-only} the uncontended case alone (with full iterations unless {@code --quick});
     * with {@code --no-jmh} not the JMH guard case.
     */
    private static List<BenchCase.Listed> select(
            List<BenchCase.Listed> all, Set<String> only, boolean uncontendedOnly, boolean jmh) {
        return all.stream()
                .filter(c -> only == null || only.contains(c.name()))
                .filter(c -> !uncontendedOnly || c.measures() instanceof Uncontended)
                .filter(c -> jmh || !(c.measures() instanceof GuardBenchmark))
                .toList();
    }

    private static double parseOrNaN(String s) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static void usage(List<String> names, String error) {
        if (error != null) {
            System.err.println(error);
        }
        System.err.println("usage: Bench [--quick] [--json FILE] [--no-jmh] [--uncontended-only] [--only CASE,...]"
                + " [--network loopback|dc] [--rtt-ms MS]");
        System.err.println("  --network dc     3 members with data on disk, --rtt-ms (default 0.5) on every link");
        System.err.println("  --only CASE,...  run only the named cases, of: " + String.join(",", names));
        System.exit(error == null ? 0 : 2);
    }

    /** Starts etcd and the client, runs the cases that use them, stops both, then runs the others. */
    private void run(List<BenchCase.Listed> cases) throws Exception {
        report.meta.put("mode", quick ? "quick" : "full");
        report.meta.put("java", System.getProperty("java.version"));
        report.meta.put("cpus", Runtime.getRuntime().availableProcessors());
        try (DataCentre dc = dcRtt == null ? null : DataCentre.start(dcRtt);
                EtcdCluster cluster = dc == null ? EtcdCluster.start(1) : null) {
            String etcd = dc == null ? cluster.toString() : DataCentre.describe(dcRtt, dc.cluster);
            log("etcd: %s", etcd);
            report.meta.put("etcd", etcd);
            report.meta.put("network", dc == null ? "loopback" : "dc");
            endpoints = dc == null ? cluster.endpoints() : dc.endpoints;
            counter = new RpcCounter();
            client = Client.builder()
                    .endpoints(endpoints.toArray(String[]::new))
                    .interceptor(EtcdDeadlines.unary(EtcdOptions.defaults().requestTimeout()), counter)
                    .build();
            try {
                client.getKVClient().get(bs(root)).get(10, TimeUnit.SECONDS); // connect
                for (BenchCase.Listed c : cases) {
                    if (c.usesEtcd()) {
                        c.measures().run(this);
                    }
                }
            } finally {
                client.close();
            }
        }
        for (BenchCase.Listed c : cases) {
            if (!c.usesEtcd()) {
                c.measures().run(this);
            }
        }
    }

    // ------------------------------------------------------------------ for the cases

    private static final long START = System.nanoTime();

    /** Prints a progress line, prefixed with the seconds since the start. */
    static void log(String fmt, Object... args) {
        System.out.printf(
                Locale.ROOT, "[bench %5.1fs] " + fmt + "%n", prepend((System.nanoTime() - START) / 1e9, args));
        System.out.flush();
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

    /** Waits up to 30 s for {@code f}. */
    static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    /** @return how many keys lie under {@code prefix + "/"}, read within {@code seconds} */
    long keysUnder(String prefix, long seconds) throws Exception {
        GetOption count = GetOption.builder().isPrefix(true).withCountOnly(true).build();
        return client.getKVClient()
                .get(bs(prefix + "/"), count)
                .get(seconds, TimeUnit.SECONDS)
                .getCount();
    }

    /** Deletes every key under {@code prefix + "/"}, within 10 s. */
    void deleteUnder(String prefix) throws Exception {
        client.getKVClient()
                .delete(bs(prefix + "/"), DeleteOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS);
    }

    /** @return the used heap after GC: the least of four readings, each after {@code System.gc()} */
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

    /** @return the client's LeaseKeepAlive calls per second over the next {@code windowMs} */
    double keepalivesPerSecond(long windowMs) throws InterruptedException {
        RpcCounter.Snapshot k0 = counter.snapshot();
        long t0 = System.nanoTime();
        Thread.sleep(windowMs);
        RpcCounter.Snapshot k = counter.snapshot().minus(k0);
        return k.calls("Lease/LeaseKeepAlive") / ((System.nanoTime() - t0) / 1e9);
    }
}
