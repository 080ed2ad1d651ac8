package io.disco.chaos;

import io.disco.testservers.FakeClock;
import io.disco.testservers.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The fault-injection run of one {@link Workload}: a 3-member etcd cluster on loopback, a resource
 * process ({@link ResourceMain}), owner processes ({@link Owner}) that each reach etcd only through
 * TCP proxies of their own and run with a wall clock the nemesis can step ({@link FakeClock}), a
 * {@link Hostile} owner that sends the resource tokens nobody issued, and a {@link Nemesis}. Then
 * every {@link Checker} reads what the run left.
 *
 * <p>{@code java io.disco.chaos.Chaos [--backend etcd|zookeeper|redis] [--seconds S | --minutes M] [--seed N] [--owners N]
 * [--workload W] [--broken] [--no-net] [--faults K,K...]}: runs every workload (or one), prints one
 * table with a column per workload and {@code N passed, N failed}, and exits 1 if a safety checker
 * failed. The members run in network namespaces of their own when a fault dealt needs it (by default
 * where the machine allows it: root, iproute2, nftables); {@code --no-net} deals only the faults of
 * the first suite (no link or member-network faults); {@code --faults} names the kinds to deal. With
 * {@code --backend zookeeper} the cluster is a 3-member ZooKeeper ensemble of server processes
 * ({@link ZkMembers}) and the faults dealt by default are {@link #zookeeperKinds}: every kind but compaction, the
 * members then each in a network namespace of their own. With {@code --backend redis} it is a Sentinel-managed Redis
 * (a primary, two replicas, three sentinels: {@link RedisMembers}) and the faults are {@link #redisKinds}: the
 * failovers of {@link RedisFaults} and, where namespaces can be made, the member partitions (each data server and a
 * sentinel beside it in a namespace of their own). The etcd binary is {@code DISCO_ETCD_BINARY}, else
 * {@code etcd} on {@code PATH} ({@code ./chaos} sets it: etcd 3.5 by default, {@code --etcd system|PATH}); every
 * table starts with the server the runs used ({@link Members#server()}, {@link EtcdMembers#label}).
 */
public final class Chaos {

    /**
     * Settings of one run.
     *
     * @param ttlSeconds the owners' lease TTL (etcd) or session timeout (ZooKeeper): 2 s
     * @param requestTimeoutMillis the owners' request timeout ({@link Owner#REQUEST_TIMEOUT}, 1 s): shorter than the
     *     TTL, so that a {@link Nemesis#FREEZE_ALL} fits between them
     * @param workMillis the owners' work between read and write: 20 ms, or 300 ms against a broken
     *     resource, where the freeze must land inside that window (seen through the owner's output and a
     *     spawned {@code kill}, which on a busy machine can take longer than 20 ms) for the zombie write to happen
     */
    record Options(
            Workload workload,
            long seconds,
            long seed,
            int owners,
            long ttlSeconds,
            long requestTimeoutMillis,
            boolean broken,
            long workMillis,
            List<String> faults,
            String backend) {

        Options {
            if (requestTimeoutMillis >= TimeUnit.SECONDS.toMillis(ttlSeconds)) {
                throw new IllegalArgumentException("the owners' request timeout (" + requestTimeoutMillis
                        + " ms) must be shorter than their TTL (" + ttlSeconds + " s)");
            }
        }

        /** Every fault kind this machine allows ({@link #faultKinds}); only owner freezes when broken. */
        Options(Workload workload, long seconds, long seed, int owners, boolean broken) {
            this(workload, seconds, seed, owners, broken, broken ? Nemesis.PROCESS_KINDS : faultKinds(true));
        }

        /** The given fault kinds (the nemesis deals them each once per round). */
        Options(Workload workload, long seconds, long seed, int owners, boolean broken, List<String> faults) {
            this(workload, seconds, seed, owners, broken, faults, "etcd");
        }

        /** The given fault kinds on {@code backend}, {@code etcd} or {@code zookeeper}. */
        Options(
                Workload workload,
                long seconds,
                long seed,
                int owners,
                boolean broken,
                List<String> faults,
                String backend) {
            this(
                    workload,
                    seconds,
                    seed,
                    owners,
                    2,
                    Owner.REQUEST_TIMEOUT.toMillis(),
                    broken,
                    broken ? 300 : 20,
                    List.copyOf(faults),
                    backend);
        }

        /**
         * @return whether a fault needs the members in network namespaces of their own and this machine can make them
         *     (root, iproute2, nftables); where it cannot, those kinds are not dealt (the nemesis says so)
         */
        boolean networked() {
            return faults.stream().anyMatch(Nemesis.NET_KINDS::contains)
                    && io.disco.testservers.MemberNetwork.unavailableReason().isEmpty();
        }

        /** @return the cluster of this run's backend, started */
        Members startMembers() {
            return switch (backend) {
                case "zookeeper" -> new ZkMembers(networked());
                case "redis" -> new RedisMembers(networked());
                default -> new EtcdMembers(networked());
            };
        }
    }

    /**
     * The fault kinds to deal: without {@code net}, those of the first suite (processes, proxies,
     * clocks); with it also the slow and lossy links, and the member partitions where this machine can
     * make network namespaces (else they are left out, and why is printed).
     */
    static List<String> faultKinds(boolean net) {
        List<String> kinds = new ArrayList<>(Nemesis.PROCESS_KINDS);
        if (net) {
            kinds.addAll(Nemesis.LINK_KINDS);
            java.util.Optional<String> why = io.disco.testservers.MemberNetwork.unavailableReason();
            if (why.isEmpty()) {
                kinds.addAll(Nemesis.NET_KINDS);
            } else {
                System.err.println("[chaos] member partitions left out: " + why.get());
            }
        }
        return kinds;
    }

    /**
     * The fault kinds to deal on ZooKeeper: those of {@link #faultKinds} but {@code compact} (ZooKeeper has no
     * history to compact); its networked ensemble has peer-link proxies as etcd's cluster has.
     */
    static List<String> zookeeperKinds(boolean net) {
        return faultKinds(net).stream().filter(k -> !k.equals("compact")).toList();
    }

    /**
     * The fault kinds to deal on a Sentinel-managed Redis ({@link RedisMembers}): the process kinds but compaction,
     * with {@code net} the owner-link kinds and the member partitions where this machine can make network namespaces
     * (the data servers and their sentinels then run in them; else the partitions are left out, and why is printed),
     * and the failover kinds of {@link RedisFaults}; not the peer-link kinds (no peer ports behind proxies).
     */
    static List<String> redisKinds(boolean net) {
        List<String> kinds = new ArrayList<>(
                Nemesis.PROCESS_KINDS.stream().filter(k -> !k.equals("compact")).toList());
        if (net) {
            kinds.addAll(Nemesis.LINK_KINDS);
            java.util.Optional<String> why = io.disco.testservers.MemberNetwork.unavailableReason();
            if (why.isEmpty()) {
                kinds.addAll(Nemesis.NET_KINDS.stream()
                        .filter(k -> !Nemesis.PEER_KINDS.contains(k))
                        .toList());
            } else {
                System.err.println("[chaos] member partitions left out: " + why.get());
            }
        }
        kinds.addAll(Nemesis.REDIS_KINDS);
        return kinds;
    }

    /**
     * What one run found.
     *
     * @param server what the members ran ({@link Members#server()}): {@code etcd 3.5.16 at /path/etcd}, {@code ZooKeeper 3.9.3}
     * @param dealt the fault kinds the nemesis dealt: those asked for that the members can deal ({@link Nemesis#kinds()})
     */
    record Result(Options options, List<Observations.Fault> faults, Report report, String server, List<String> dealt) {
        boolean passed() {
            return report.passed();
        }

        String table() {
            return Chaos.table(List.of(this));
        }
    }

    private static final String NAME_ROOT = "/disco-chaos/";

    private Chaos() {}

    public static void main(String[] args) throws Exception {
        long seconds = 40;
        long seed = System.nanoTime();
        int owners = 4;
        boolean broken = false;
        boolean net = true;
        List<String> faults = null;
        List<Workload> workloads = Workload.ALL;
        String backend = "etcd";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backend" -> backend = args[++i];
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--minutes" -> seconds = 60 * Long.parseLong(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--owners" -> owners = Integer.parseInt(args[++i]);
                case "--broken" -> broken = true;
                case "--no-net" -> net = false;
                case "--faults" -> faults = List.of(args[++i].split(","));
                case "--workload" -> workloads = List.of(Workload.named(args[++i]));
                default ->
                    throw new IllegalArgumentException(
                            "usage: Chaos [--backend etcd|zookeeper|redis] [--seconds S | --minutes M] [--seed N]"
                                    + " [--owners N] [--workload "
                                    + String.join(
                                            "|",
                                            Workload.ALL.stream()
                                                    .map(Workload::name)
                                                    .toList())
                                    + "] [--broken] [--no-net] [--faults " + String.join(",", Nemesis.KINDS) + "]");
            }
        }
        if (!List.of("etcd", "zookeeper", "redis").contains(backend)) {
            throw new IllegalArgumentException("--backend: etcd, zookeeper or redis, not " + backend);
        }
        if (faults == null) {
            faults = switch (backend) {
                case "zookeeper" -> broken ? List.of("freeze-owner") : zookeeperKinds(net);
                case "redis" -> broken ? List.of("freeze-owner") : redisKinds(net);
                default -> broken ? Nemesis.PROCESS_KINDS : faultKinds(net);
            };
        }
        for (String kind : faults) {
            if (!List.of(Nemesis.KINDS).contains(kind)) {
                throw new IllegalArgumentException(
                        "--faults: no fault kind " + kind + "; the kinds: " + String.join(",", Nemesis.KINDS));
            }
        }
        List<Result> results = new ArrayList<>();
        for (Workload w : workloads) {
            System.err.printf(
                    Locale.ROOT,
                    "[chaos] %s, workload %s, %d s, seed %d, faults %s%n",
                    backend,
                    w.name(),
                    seconds,
                    seed,
                    String.join(",", faults));
            results.add(run(new Options(w, seconds, seed, owners, broken, faults, backend)));
            System.out.print(
                    results.size() < workloads.size() ? table(results) : ""); // a long run shows each finished workload
        }
        System.out.print(table(results));
        long passed = results.stream().filter(Result::passed).count();
        System.out.println(passed + " passed, " + (results.size() - passed) + " failed");
        System.exit(passed == results.size() ? 0 : 1);
    }

    /**
     * One table: a line per server the runs used ({@link EtcdMembers#label}: an etcd with the lease bug of etcd
     * issues 15247 and 12528 says so), a line per run with the fault kinds dealt (and those asked for that the members
     * could not be dealt: the partitions without root), then a row per figure, a column per run.
     */
    static String table(List<Result> results) {
        StringBuilder header = new StringBuilder();
        results.stream()
                .map(Result::server)
                .distinct()
                .forEach(s ->
                        header.append("server: ").append(EtcdMembers.label(s)).append('\n'));
        for (Result r : results) {
            List<String> left = r.options().faults().stream()
                    .filter(k -> !r.dealt().contains(k))
                    .toList();
            header.append("faults dealt")
                    .append(results.size() > 1 ? " (" + r.options().workload().name() + ")" : "")
                    .append(": ")
                    .append(r.dealt().isEmpty() ? "none" : String.join(",", r.dealt()))
                    .append(left.isEmpty() ? "" : "; not dealt (the members cannot): " + String.join(",", left))
                    .append('\n');
        }
        Map<String, List<String>> rows = new java.util.LinkedHashMap<>();
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            int column = i;
            put(
                    rows,
                    "workload",
                    column,
                    r.options().workload().name() + (r.options().broken() ? " (BROKEN)" : ""));
            put(rows, "backend", column, r.server().replaceFirst(" at .*", ""));
            put(
                    rows,
                    "run length, s / seed",
                    column,
                    r.options().seconds() + " / " + r.options().seed());
            put(
                    rows,
                    "owners / TTL, s",
                    column,
                    r.options().owners() + " / " + r.options().ttlSeconds());
            put(
                    rows,
                    "owners' request timeout, ms",
                    column,
                    Long.toString(r.options().requestTimeoutMillis()));
            for (String type : Nemesis.KINDS) {
                List<Observations.Fault> ofType =
                        r.faults().stream().filter(f -> f.type().equals(type)).toList();
                long onLeader = ofType.stream()
                        .filter(f -> f.target().endsWith("-leader"))
                        .count();
                put(
                        rows,
                        "faults: " + type + (type.endsWith("-member") ? " (on the leader)" : ""),
                        column,
                        ofType.size() + (type.endsWith("-member") ? " (" + onLeader + ")" : ""));
            }
            r.report().figures.forEach((k, v) -> put(rows, k, column, Long.toString(v)));
            put(rows, "verdict", column, r.passed() ? "PASSED" : "FAILED");
        }
        StringBuilder b = new StringBuilder(header);
        String label =
                "%-" + rows.keySet().stream().mapToInt(String::length).max().orElse(10) + "s";
        rows.forEach((k, v) -> {
            b.append(String.format(Locale.ROOT, label, k));
            for (int i = 0; i < results.size(); i++) {
                b.append(String.format(Locale.ROOT, " %14s", i < v.size() && v.get(i) != null ? v.get(i) : "-"));
            }
            b.append('\n');
        });
        results.stream()
                .filter(r -> !r.passed())
                .forEach(r -> r.report()
                        .failures
                        .forEach(f -> b.append(r.options().workload().name())
                                .append(": ")
                                .append(f)
                                .append('\n')));
        return b.toString();
    }

    private static void put(Map<String, List<String>> rows, String row, int column, String value) {
        List<String> cells = rows.computeIfAbsent(row, k -> new ArrayList<>());
        while (cells.size() <= column) {
            cells.add(null);
        }
        cells.set(column, value);
    }

    static Result run(Options o) throws Exception {
        FakeClock.requireInstalled();
        String name = NAME_ROOT + UUID.randomUUID().toString().substring(0, 8) + "/"
                + o.workload().name();
        List<String> ownerLines = new CopyOnWriteArrayList<>();
        List<Child> owners = new ArrayList<>();
        List<List<TcpProxy>> proxies = new ArrayList<>();
        List<FakeClock> clocks = new ArrayList<>();
        Child hostile = null;
        try (Members etcd = o.startMembers();
                Child resource = new Child(resourceCommand(etcd, o.broken()), Map.of(), null)) {
            URI resourceUri = URI.create(
                    "http://127.0.0.1:" + resource.await("LISTENING ", 30).split(" ")[1]);
            hostile = new Child(
                    o.broken()
                            ? List.of(Hostile.class.getName(), resourceUri.toString(), "--reads-only")
                            : List.of(Hostile.class.getName(), resourceUri.toString()),
                    Map.of(),
                    ownerLines);
            for (int i = 0; i < o.owners(); i++) {
                List<TcpProxy> mine = new ArrayList<>();
                for (InetSocketAddress member : etcd.clientAddresses()) {
                    mine.add(new TcpProxy(member));
                }
                proxies.add(mine);
                FakeClock clock = new FakeClock();
                clocks.add(clock);
                String via =
                        etcd.ownerEndpoints(mine.stream().map(TcpProxy::port).toList());
                owners.add(new Child(
                        List.of(
                                Owner.class.getName(),
                                o.workload().name(),
                                "o" + i,
                                via,
                                resourceUri.toString(),
                                name,
                                Long.toString(o.ttlSeconds()),
                                Long.toString(o.workMillis()),
                                Long.toString(o.requestTimeoutMillis()),
                                Integer.toString(o.owners())),
                        clock.environment(),
                        ownerLines));
            }
            long ttlNanos = TimeUnit.SECONDS.toNanos(o.ttlSeconds());
            Nemesis nemesis = new Nemesis(
                    etcd,
                    owners,
                    proxies,
                    clocks,
                    ownerLines,
                    o.seed(),
                    ttlNanos,
                    TimeUnit.MILLISECONDS.toNanos(o.requestTimeoutMillis()),
                    o.faults());
            nemesis.run(System.nanoTime() + TimeUnit.SECONDS.toNanos(o.seconds()), o.broken());
            Thread.sleep(2000); // the last fault heals
            java.util.Optional<String> unrecovered = nemesis.awaitRecovered(TimeUnit.SECONDS.toNanos(30));
            long endNanos = System.nanoTime();
            long died = owners.stream().filter(c -> !c.process.isAlive()).count();
            for (Child c : owners) {
                c.close();
            }
            hostile.close();
            List<String> history = Arrays.asList(HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(resourceUri.resolve("/history"))
                                    .timeout(Duration.ofSeconds(10))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body()
                    .split("\n"));
            long keysLeft = etcd.keysLeft(name, ttlNanos);
            List<Observations.Fault> faults = new ArrayList<>(nemesis.faults);
            List<Observations.Fault> failovers = etcd.observed();
            faults.addAll(failovers);
            Observations seen = Observations.parse(history, ownerLines, faults, keysLeft, endNanos);
            Report report = new Report();
            Checker.all().forEach(c -> c.check(seen, report));
            o.workload().checkers().forEach(c -> c.check(seen, report));
            report.safety("owner processes that died during the run", died, null);
            report.safety(
                    "cluster not recovered 30 s after the faults healed (all members healthy, one leader)",
                    unrecovered.isPresent() ? 1 : 0,
                    unrecovered.orElse(null));
            freezeAllFigures(nemesis.faults, report);
            if (o.backend().equals("redis")) {
                new LineageTokens(ttlNanos).check(seen, report);
                report.figure("failovers (a promotion the sentinels made, seen by its config epoch)", failovers.size());
                report.figure(
                        "grants refused, fail closed (UnsafeTokenException seen by an owner)",
                        ownerLines.stream()
                                .filter(l -> l.contains(" UnsafeTokenException"))
                                .count());
            }
            if (!report.passed() || System.getenv("DISCO_CHAOS_KEEP_LOGS") != null) {
                Path dir =
                        Files.createTempDirectory("disco-chaos-" + o.workload().name() + "-" + o.seed() + "-");
                Files.write(dir.resolve("owners.log"), ownerLines);
                Files.write(dir.resolve("history.log"), history);
                Files.write(
                        dir.resolve("faults.log"),
                        faults.stream().map(Object::toString).toList());
                System.err.println("[chaos] the logs of this run: " + dir);
            }
            if (report.figures.get("grants") == 0
                            && seen.events(BarrierRounds.PASS).isEmpty()
                    || died > 0) {
                owners.forEach(c -> c.others.forEach(l -> System.err.println("[owner output] " + l)));
            }
            return new Result(o, nemesis.faults, report, etcd.server(), nemesis.kinds());
        } finally {
            for (Child c : owners) {
                c.process.destroyForcibly();
            }
            if (hostile != null) {
                hostile.process.destroyForcibly();
            }
            proxies.forEach(list -> list.forEach(TcpProxy::close));
            clocks.forEach(FakeClock::close);
        }
    }

    /**
     * What the {@link Nemesis#FREEZE_ALL} faults were: the shortest time every member was frozen together (longer
     * than the owners' request timeout by construction) and the longest from the first member's stop to the last
     * one's resume (under the TTL unless stopping and resuming them took long: the nemesis then says so).
     */
    private static void freezeAllFigures(List<Observations.Fault> faults, Report report) {
        List<Observations.Fault> all =
                faults.stream().filter(f -> f.type().equals(Nemesis.FREEZE_ALL)).toList();
        report.figure(
                "freeze-all: every member frozen together, ms (min; -1: none)",
                all.stream().mapToLong(Observations.Fault::amount).min().orElse(-1));
        report.figure(
                "freeze-all: first member stopped to last resumed, ms (max; -1: none)",
                all.stream()
                        .mapToLong(f -> (f.endNanos() - f.startNanos()) / 1_000_000)
                        .max()
                        .orElse(-1));
    }

    private static List<String> resourceCommand(Members members, boolean broken) {
        List<String> command = new ArrayList<>(List.of(ResourceMain.class.getName()));
        command.addAll(members.resourceArguments());
        if (broken) {
            command.add("--broken");
        }
        return command;
    }
}
