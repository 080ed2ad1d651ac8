package io.disco.examples;

import io.disco.examples.barrier.BarrierExample;
import io.disco.examples.boot.BootExample;
import io.disco.examples.election.basic.ElectionExample;
import io.disco.examples.election.runner.RunnerExample;
import io.disco.examples.lock.LockZombie;
import io.disco.examples.lock.db.DbExample;
import io.disco.examples.lock.grpc.client.GrpcClientExample;
import io.disco.examples.lock.grpc.resource.GrpcResource;
import io.disco.examples.lock.http.client.HttpClientExample;
import io.disco.examples.lock.http.client.SlowZombieExample;
import io.disco.examples.lock.http.resource.HttpResource;
import io.disco.examples.rwlock.basic.RWLockExample;
import io.disco.examples.semaphore.basic.SemaphoreExample;
import io.disco.fencing.guard.Guard;
import io.disco.testservers.EtcdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one-command demo: starts a throwaway etcd (through disco-test-servers: an {@code etcd} binary on
 * free loopback ports, or the cluster in {@code DISCO_ETCD_ENDPOINTS}), starts the HTTP and gRPC
 * resources in this process on free ports, runs every scenario (the Spring Boot one starts two processes
 * of {@code disco-spring-boot-example} from the classpath in {@link BootExample#CLASSPATH_FILE}), prints one verdict line per scenario
 * and a summary line {@code N passed, M failed}, stops everything, and exits non-zero if any
 * scenario failed.
 *
 * <p>With {@code --backend zookeeper} (or {@code --backend redis}: a throwaway {@code redis-server},
 * {@link DemoBackend#embeddedRedis()}) the scenarios run on an in-process ZooKeeper server instead
 * ({@link DemoBackend#embeddedZooKeeper()}: nothing installed), through the same backend-neutral owners
 * ({@link DemoBackend}); the resources' guards confirm tokens with ZooKeeper. A scenario that cannot run there says
 * so in its verdict ({@code — N/A}), and the summary counts it apart.
 */
public final class Demo {

    private Demo() {}

    /** The backends {@code --backend} names. */
    private static final List<String> BACKENDS = List.of("etcd", "zookeeper", "redis");

    /**
     * Runs the demo.
     *
     * @param args {@code [--backend etcd|zookeeper|redis]} (etcd by default)
     */
    public static void main(String[] args) {
        String backend = "etcd";
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--backend") && i + 1 < args.length && BACKENDS.contains(args[i + 1])) {
                backend = args[++i];
            } else {
                System.err.println("usage: demo [--backend etcd|zookeeper|redis]");
                System.exit(2);
            }
        }
        System.exit(
                switch (backend) {
                    case "zookeeper" -> runOn(Backend.ZOOKEEPER);
                    case "redis" -> runOn(Backend.REDIS);
                    default -> run();
                });
    }

    /**
     * Runs the demo on etcd and returns its exit status.
     *
     * @return 0 when every scenario passed, 1 when one failed, 2 when etcd or a resource could not start
     */
    public static int run() {
        Say say = new Say("demo");
        long started = System.nanoTime();
        Duration ttl = LockZombie.DEFAULT_ZOMBIE_TTL;
        // One namespace per run, so that the demo never contends with anything else on a shared etcd.
        String ns = "/disco/demo/" + UUID.randomUUID().toString().substring(0, 8);
        List<Verdict> verdicts = new ArrayList<>();
        say.step("starting a throwaway etcd...");
        try (EtcdCluster etcd = EtcdCluster.start(1)) {
            List<String> endpoints = etcd.endpoints();
            say.step("etcd: %s", etcd.describe());
            try (io.etcd.jetcd.Client client = Cli.etcdClient(endpoints);
                    HttpResource http = HttpResource.start(0, client);
                    GrpcResource grpc = GrpcResource.start(0, client)) {
                say.step("HTTP resource on %s, gRPC resource on 127.0.0.1:%d", http.uri(), grpc.port());
                scenario(
                        verdicts,
                        "lock/db",
                        () -> DbExample.run(endpoints, ns + "/lock/db", ttl).verdict());
                scenario(verdicts, HttpResource.SCENARIO, () -> HttpResource.selfCheck(http.uri()));
                scenario(
                        verdicts,
                        HttpClientExample.SCENARIO,
                        () -> HttpClientExample.run(endpoints, http.uri(), ns + "/lock/http", ttl)
                                .verdict());
                scenario(
                        verdicts,
                        SlowZombieExample.SCENARIO,
                        () -> SlowZombieExample.run(endpoints, http.uri(), ns + "/lock/http-slow", ttl));
                scenario(verdicts, GrpcResource.SCENARIO, () -> GrpcResource.selfCheck(grpc.port()));
                scenario(
                        verdicts,
                        GrpcClientExample.SCENARIO,
                        () -> GrpcClientExample.run(endpoints, "127.0.0.1", grpc.port(), ns + "/lock/grpc", ttl)
                                .verdict());
            }
            scenario(
                    verdicts,
                    RWLockExample.SCENARIO,
                    () -> RWLockExample.run(endpoints, ns + "/rwlock/basic", ttl)
                            .verdict());
            scenario(
                    verdicts,
                    ElectionExample.SCENARIO,
                    () -> ElectionExample.run(endpoints, ns + "/election/basic", ttl)
                            .verdict());
            scenario(
                    verdicts,
                    SemaphoreExample.SCENARIO,
                    () -> SemaphoreExample.run(endpoints, ns + "/semaphore/basic", ttl));
            scenario(verdicts, BarrierExample.SCENARIO, () -> BarrierExample.run(endpoints, ns + "/barrier/basic"));
            scenario(verdicts, RunnerExample.SCENARIO, () -> RunnerExample.run(endpoints, ns + "/election/runner"));
            scenario(verdicts, BootExample.SCENARIO, () -> bootExample(endpoints, ns + "/boot"));
        } catch (Exception e) {
            say.step("could not set up the demo: %s", e.getMessage() == null ? e : e.getMessage());
            Say.OUT.println("VERDICT demo: setup failed — FAILED");
            return 2;
        }
        return summary(verdicts, started);
    }

    /** The backends the demo runs on besides etcd, each a throwaway server it starts itself. */
    public enum Backend {
        /** An in-process ZooKeeper server ({@link DemoBackend#embeddedZooKeeper()}). */
        ZOOKEEPER("an in-process ZooKeeper", "ZooKeeper"),
        /** A throwaway redis-server ({@link DemoBackend#embeddedRedis()}). */
        REDIS("a throwaway redis-server", "Redis");

        final String starting;
        final String label;

        Backend(String starting, String label) {
            this.starting = starting;
            this.label = label;
        }

        DemoBackend start() {
            return this == ZOOKEEPER ? DemoBackend.embeddedZooKeeper() : DemoBackend.embeddedRedis();
        }
    }

    /**
     * Runs the demo on an in-process ZooKeeper server and returns its exit status ({@link #runOn}).
     *
     * @return 0 when every scenario that applies passed, 1 when one failed, 2 when ZooKeeper or a resource could
     *     not start
     */
    public static int runOnZooKeeper() {
        return runOn(Backend.ZOOKEEPER);
    }

    /**
     * Runs the demo on a throwaway server of {@code on} and returns its exit status: the same scenarios, in the same
     * order, on its {@link DemoBackend}; the Spring Boot one is reported as not applicable (it runs the example
     * application on the demo's etcd; the application's own tests run it on the other backends).
     *
     * @param on the backend
     * @return 0 when every scenario that applies passed, 1 when one failed, 2 when the server or a resource could
     *     not start
     */
    public static int runOn(Backend on) {
        Say say = new Say("demo");
        long started = System.nanoTime();
        Duration ttl = LockZombie.DEFAULT_ZOMBIE_TTL;
        String ns = "/disco/demo/" + UUID.randomUUID().toString().substring(0, 8);
        List<Verdict> verdicts = new ArrayList<>();
        say.step("starting %s...", on.starting);
        try (DemoBackend zk = on.start()) {
            say.step("%s", zk.describe());
            try (HttpResource http = HttpResource.start(
                            0, Guard.builder().issuedBound(zk.issuedBound()).build());
                    GrpcResource grpc = GrpcResource.start(0, zk.issuedBound())) {
                say.step("HTTP resource on %s, gRPC resource on 127.0.0.1:%d", http.uri(), grpc.port());
                scenario(
                        verdicts,
                        "lock/db",
                        () -> DbExample.run(zk, ns + "/lock/db", ttl).verdict());
                scenario(verdicts, HttpResource.SCENARIO, () -> HttpResource.selfCheck(http.uri()));
                scenario(
                        verdicts,
                        HttpClientExample.SCENARIO,
                        () -> HttpClientExample.run(zk, http.uri(), ns + "/lock/http", ttl)
                                .verdict());
                scenario(
                        verdicts,
                        SlowZombieExample.SCENARIO,
                        () -> on == Backend.REDIS
                                ? slowZombieOnItsOwnResource(zk, ns + "/lock/http-slow", ttl)
                                : SlowZombieExample.run(zk, http.uri(), ns + "/lock/http-slow", ttl));
                scenario(verdicts, GrpcResource.SCENARIO, () -> GrpcResource.selfCheck(grpc.port()));
                scenario(
                        verdicts,
                        GrpcClientExample.SCENARIO,
                        () -> GrpcClientExample.run(zk, "127.0.0.1", grpc.port(), ns + "/lock/grpc", ttl)
                                .verdict());
            }
            scenario(
                    verdicts,
                    RWLockExample.SCENARIO,
                    () -> RWLockExample.run(zk, ns + "/rwlock/basic", ttl).verdict());
            scenario(
                    verdicts,
                    ElectionExample.SCENARIO,
                    () -> ElectionExample.run(zk, ns + "/election/basic", ttl).verdict());
            scenario(verdicts, SemaphoreExample.SCENARIO, () -> SemaphoreExample.run(zk, ns + "/semaphore/basic", ttl));
            scenario(verdicts, BarrierExample.SCENARIO, () -> BarrierExample.run(zk, ns + "/barrier/basic"));
            scenario(verdicts, RunnerExample.SCENARIO, () -> RunnerExample.run(zk, ns + "/election/runner"));
            scenario(
                    verdicts,
                    BootExample.SCENARIO,
                    () -> Verdict.notApplicable(
                            BootExample.SCENARIO,
                            on == Backend.ZOOKEEPER
                                    ? "not applicable on ZooKeeper: the scenario runs the example application on the"
                                            + " demo's etcd (its zookeeper profile runs it on ZooKeeper:"
                                            + " ExampleApplicationOnZooKeeperTest)"
                                    : "not applicable on Redis: the scenario runs the example application on the"
                                            + " demo's etcd"));
        } catch (Exception e) {
            say.step("could not set up the demo: %s", e.getMessage() == null ? e : e.getMessage());
            Say.OUT.println("VERDICT demo: setup failed — FAILED");
            return 2;
        }
        return summary(verdicts, started);
    }

    /**
     * The slow-zombie scenario on an HTTP resource of its own: on Redis tokens rise per name (on etcd and ZooKeeper
     * they are the cluster's revisions, shared by every name), so a guard that admitted another name's token 2 would
     * refuse this name's token 1; a resource guards one name's writes, as the library's guide says.
     */
    private static Verdict slowZombieOnItsOwnResource(DemoBackend backend, String name, Duration ttl) {
        try (HttpResource own = HttpResource.start(
                0, Guard.builder().issuedBound(backend.issuedBound()).build())) {
            return SlowZombieExample.run(backend, own.uri(), name, ttl);
        } catch (Exception e) {
            return new Verdict(SlowZombieExample.SCENARIO, false, "step failed: " + e);
        }
    }

    /** Prints the summary; the exit status: 0 when every scenario that ran passed, else 1. */
    private static int summary(List<Verdict> verdicts, long started) {
        long notApplicable = verdicts.stream().filter(v -> !v.applicable()).count();
        long passed = verdicts.stream().filter(v -> v.applicable() && v.ok()).count();
        long failed = verdicts.stream().filter(v -> !v.ok()).count();
        Say.OUT.println();
        Say.OUT.println("Summary (" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s):");
        for (Verdict v : verdicts) {
            Say.OUT.println("  " + v.line());
        }
        Say.OUT.println(passed + " passed, " + failed + " failed"
                + (notApplicable == 0 ? "" : ", " + notApplicable + " not applicable"));
        return failed == 0 ? 0 : 1;
    }

    /** The Spring Boot scenario: two processes of disco-spring-boot-example, built by {@code ./demo}. */
    private static Verdict bootExample(List<String> endpoints, String prefix) {
        String classpath;
        try {
            classpath = BootExample.classpath(BootExample.CLASSPATH_FILE);
        } catch (java.io.IOException e) {
            return new Verdict(BootExample.SCENARIO, false, "step failed: " + e.getMessage());
        }
        return BootExample.run(endpoints, classpath, prefix, Duration.ofSeconds(2));
    }

    private static void scenario(List<Verdict> verdicts, String name, Supplier<Verdict> run) {
        Verdict v;
        try {
            v = run.get();
        } catch (RuntimeException e) {
            v = new Verdict(name, false, "step failed: " + e);
        }
        Say.OUT.println(v.line());
        verdicts.add(v);
    }
}
