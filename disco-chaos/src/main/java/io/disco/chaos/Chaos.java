package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The fault-injection run: a 3-member etcd cluster on loopback, a resource process, owner processes
 * that each reach etcd only through TCP proxies of their own, and a nemesis that injects one fault
 * at a time (healing in between), chosen with a printed seed: freeze an owner (SIGSTOP) or partition
 * it (its proxies blackholed) for 1.5–3 × TTL, kill -9 and restart an etcd member, freeze a member
 * for under a renewal's margin, compact to the current revision. Then the {@link Checkers} decide.
 *
 * <p>{@code java io.disco.chaos.Chaos [--seconds S] [--seed N] [--owners N] [--broken]}; prints the
 * table and exits 1 if a safety checker failed.
 */
public final class Chaos {

    /** Settings of one run. */
    record Options(long seconds, long seed, int owners, long ttlSeconds, boolean broken, long workMillis) {

        /**
         * With the owners' work between read and write 20 ms, or 300 ms against a broken resource: there
         * the freeze must land inside that window (seen through the owner's output and a spawned
         * {@code kill}, which on a busy machine can take longer than 20 ms) for the zombie write to happen.
         */
        Options(long seconds, long seed, int owners, long ttlSeconds, boolean broken) {
            this(seconds, seed, owners, ttlSeconds, broken, broken ? 300 : 20);
        }
    }

    /** What one run found. */
    record Result(Options options, List<Checkers.Fault> faults, Checkers checks) {
        boolean passed() {
            return checks.passed();
        }

        String table() {
            StringBuilder b = new StringBuilder();
            b.append(String.format(Locale.ROOT, "workload lock, %d s, seed %d, %d owners, TTL %d s%s%n", options.seconds(),
                    options.seed(), options.owners(), options.ttlSeconds(), options.broken() ? ", BROKEN resource" : ""));
            java.util.Map<String, Long> byType = new java.util.TreeMap<>();
            faults.forEach(f -> byType.merge(f.type(), 1L, Long::sum));
            b.append("  faults: ").append(byType).append('\n');
            checks.figures.forEach((k, v) -> b.append(String.format(Locale.ROOT, "  %-58s %d%n", k, v)));
            b.append("  verdict: ").append(passed() ? "PASSED" : "FAILED " + checks.failures).append('\n');
            return b.toString();
        }
    }

    private static final String NAME_ROOT = "/disco-chaos/";

    private Chaos() {
    }

    public static void main(String[] args) throws Exception {
        long seconds = 60;
        long seed = System.nanoTime();
        int owners = 4;
        boolean broken = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--minutes" -> seconds = 60 * Long.parseLong(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--owners" -> owners = Integer.parseInt(args[++i]);
                case "--broken" -> broken = true;
                case "--workload" -> {
                    if (!args[++i].equals("lock")) {
                        throw new IllegalArgumentException("workloads so far: lock");
                    }
                }
                default -> throw new IllegalArgumentException("usage: Chaos [--seconds S | --minutes M] [--seed N]"
                        + " [--owners N] [--workload lock] [--broken]");
            }
        }
        Result r = run(new Options(seconds, seed, owners, 2, broken));
        System.out.print(r.table());
        System.out.println(r.passed() ? "1 passed, 0 failed" : "0 passed, 1 failed");
        System.exit(r.passed() ? 0 : 1);
    }

    /** A child JVM whose stdout lines are collected. */
    private static final class Child implements AutoCloseable {
        final Process process;
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> others = new CopyOnWriteArrayList<>();

        Child(List<String> line, List<String> sink) throws Exception {
            List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(), "-Xmx128m",
                    "-cp", System.getProperty("java.class.path")));
            cmd.addAll(line);
            process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            Thread t = new Thread(() -> read(sink), "chaos-child-output");
            t.setDaemon(true);
            t.start();
        }

        private void read(List<String> sink) {
            try {
                new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8)).lines().forEach(l -> {
                        lines.add(l);
                        if (sink != null && l.matches("^\\d+ .*")) {
                            sink.add(l);
                        } else if (sink != null && !l.startsWith("\t") && others.size() < 20) {
                            others.add(l); // what an owner printed besides its events: shown when it made no progress
                        }
                    });
            } catch (java.io.UncheckedIOException closed) {
                // the process ended and its stream was closed under the reader
            }
        }

        String await(String prefix, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < deadline) {
                String l = lines.poll(100, TimeUnit.MILLISECONDS);
                if (l != null && l.startsWith(prefix)) {
                    return l;
                }
            }
            throw new IllegalStateException("no '" + prefix + "' within " + seconds + " s");
        }

        void signal(String sig) throws Exception {
            new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws Exception {
            signal("CONT");
            process.destroy(); // SIGTERM: the owner closes its session
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    static Result run(Options o) throws Exception {
        Random random = new Random(o.seed());
        String name = NAME_ROOT + UUID.randomUUID().toString().substring(0, 8) + "/lock";
        List<String> ownerLines = new CopyOnWriteArrayList<>();
        List<Checkers.Fault> faults = new ArrayList<>();
        List<Child> owners = new ArrayList<>();
        List<List<TcpProxy>> proxies = new ArrayList<>();
        try (EtcdCluster etcd = EtcdCluster.start(3);
             Child resource = new Child(o.broken() ? List.of(ResourceMain.class.getName(), "--broken")
                     : List.of(ResourceMain.class.getName()), null)) {
            String port = resource.await("LISTENING ", 30).split(" ")[1];
            URI resourceUri = URI.create("http://127.0.0.1:" + port);
            for (int i = 0; i < o.owners(); i++) {
                List<TcpProxy> mine = new ArrayList<>();
                for (String endpoint : etcd.endpoints()) {
                    URI u = URI.create(endpoint);
                    mine.add(new TcpProxy(new InetSocketAddress(u.getHost(), u.getPort())));
                }
                proxies.add(mine);
                String via = String.join(",", mine.stream().map(p -> "http://127.0.0.1:" + p.port()).toList());
                owners.add(new Child(List.of(OwnerMain.class.getName(), "o" + i, via, resourceUri.toString(), name,
                        Long.toString(o.ttlSeconds()), Long.toString(o.workMillis())), ownerLines));
            }
            long ttlNanos = TimeUnit.SECONDS.toNanos(o.ttlSeconds());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.seconds());
            while (System.nanoTime() < end) {
                Thread.sleep(1000 + random.nextInt(1000)); // healthy between faults
                int kind = o.broken() ? 0 : random.nextInt(5);
                long hold = (long) (ttlNanos * (1.5 + 1.5 * random.nextDouble()));
                long start = System.nanoTime();
                switch (kind) {
                    case 0 -> { // freeze an owner, the holder when one holds
                        int who = holder(ownerLines, o.owners(), random);
                        owners.get(who).signal("STOP");
                        TimeUnit.NANOSECONDS.sleep(hold);
                        owners.get(who).signal("CONT");
                        faults.add(new Checkers.Fault("freeze-owner", "o" + who, start, System.nanoTime()));
                    }
                    case 1 -> { // partition an owner from etcd
                        int who = holder(ownerLines, o.owners(), random);
                        proxies.get(who).forEach(p -> p.blackhole(true));
                        TimeUnit.NANOSECONDS.sleep(hold);
                        proxies.get(who).forEach(p -> p.blackhole(false));
                        faults.add(new Checkers.Fault("partition-owner", "o" + who, start, System.nanoTime()));
                    }
                    case 2 -> { // kill -9 a member and start it again
                        int m = random.nextInt(3);
                        etcd.kill(m);
                        Thread.sleep(500 + random.nextInt(1000));
                        etcd.startMember(m);
                        faults.add(new Checkers.Fault("kill-member", "m" + m, start, System.nanoTime()));
                    }
                    case 3 -> { // freeze a member, shorter than the lease's renewal margin
                        int m = random.nextInt(3);
                        etcd.pause(m);
                        Thread.sleep(300 + random.nextInt(700));
                        etcd.resume(m);
                        faults.add(new Checkers.Fault("freeze-member", "m" + m, start, System.nanoTime()));
                    }
                    default -> { // compact to the current revision
                        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
                            long rev = c.getKVClient().get(ByteSequence.from("x", UTF_8)).get(10, TimeUnit.SECONDS)
                                    .getHeader().getRevision();
                            try {
                                c.getKVClient().compact(rev).get(10, TimeUnit.SECONDS);
                            } catch (java.util.concurrent.ExecutionException e) {
                                if (!String.valueOf(e.getCause().getMessage()).contains("compacted")) {
                                    throw e;
                                } // nothing written since the last compaction: already compacted
                            }
                        }
                        faults.add(new Checkers.Fault("compact", "-", start, System.nanoTime()));
                    }
                }
            }
            Thread.sleep(2000); // the last fault heals
            long died = owners.stream().filter(c -> !c.process.isAlive()).count();
            for (Child c : owners) {
                c.close();
            }
            List<String> history = Arrays.asList(HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    resourceUri.resolve("/history")).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body().split("\n"));
            long keysLeft;
            try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
                // An owner whose revoke found no member answering leaves keys until its lease runs out: a TTL.
                long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
                do {
                    keysLeft = c.getKVClient().get(ByteSequence.from(name + "/", UTF_8),
                            GetOption.builder().isPrefix(true).withCountOnly(true).build()).get(10, TimeUnit.SECONDS).getCount();
                } while (keysLeft > 0 && System.nanoTime() < deadline && sleepABit());
            }
            Checkers checks = new Checkers(history, ownerLines, faults, keysLeft);
            checks.figures.put("owner processes that died during the run", died);
            if (died > 0) {
                checks.failures.add("owner processes that died during the run: " + died);
            }
            if (!checks.passed() || System.getenv("DISCO_CHAOS_KEEP_LOGS") != null) {
                java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("disco-chaos-" + o.seed() + "-");
                java.nio.file.Files.write(dir.resolve("owners.log"), ownerLines);
                java.nio.file.Files.write(dir.resolve("history.log"), history);
                java.nio.file.Files.write(dir.resolve("faults.log"), faults.stream().map(Object::toString).toList());
                System.err.println("[chaos] the logs of this run: " + dir);
            }
            if (checks.figures.get("grants") == 0 || died > 0) {
                owners.forEach(c -> c.others.forEach(l -> System.err.println("[owner output] " + l)));
                checks.failures.add("no grant at all: the owners made no progress");
            }
            return new Result(o, faults, checks);
        } finally {
            for (Child c : owners) {
                c.process.destroyForcibly();
            }
            proxies.forEach(list -> list.forEach(TcpProxy::close));
        }
    }

    private static boolean sleepABit() throws InterruptedException {
        Thread.sleep(100); // polling etcd for the leases that run out
        return true;
    }

    /**
     * The owner to freeze or cut off: preferably one inside its critical section after its read (its
     * last event a READ), waited for up to 2 s, since its write after the fault is the zombie write the
     * guard must reject; else the one holding the lock; else any.
     */
    private static int holder(List<String> ownerLines, int owners, Random random) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        int granted = -1;
        do {
            String[] lastEvent = new String[owners];
            for (String l : ownerLines) {
                String[] f = l.split(" ");
                if (f.length >= 3 && f[1].startsWith("o")) {
                    lastEvent[Integer.parseInt(f[1].substring(1))] = f[2];
                }
            }
            for (int i = 0; i < owners; i++) {
                if ("READ".equals(lastEvent[i])) {
                    return i;
                }
                if ("GRANT".equals(lastEvent[i])) {
                    granted = i;
                }
            }
            Thread.sleep(1); // polling the owners' events for one in its critical section
        } while (System.nanoTime() < deadline);
        return granted >= 0 ? granted : random.nextInt(owners);
    }

}
