package io.disco.examples;

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
import io.disco.testing.EtcdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The one-command demo: starts a throwaway etcd (through disco-testing: an {@code etcd} binary on
 * free loopback ports, or the cluster in {@code DISCO_ETCD_ENDPOINTS}), starts the HTTP and gRPC
 * resources in this process on free ports, runs every scenario (the Spring Boot one starts two processes
 * of {@code disco-spring-boot-example} from the classpath in {@link BootExample#CLASSPATH_FILE}), prints one verdict line per scenario
 * and a summary line {@code N passed, M failed}, stops everything, and exits non-zero if any
 * scenario failed.
 */
public final class Demo {

    private Demo() {
    }

    /**
     * Runs the demo.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        System.exit(run());
    }

    /**
     * Runs the demo and returns its exit status.
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
                 HttpResource http = HttpResource.start(0, client); GrpcResource grpc = GrpcResource.start(0, client)) {
                say.step("HTTP resource on %s, gRPC resource on 127.0.0.1:%d", http.uri(), grpc.port());
                scenario(verdicts, "lock/db", () -> DbExample.run(endpoints, ns + "/lock/db", ttl).verdict());
                scenario(verdicts, HttpResource.SCENARIO, () -> HttpResource.selfCheck(http.uri()));
                scenario(verdicts, HttpClientExample.SCENARIO,
                        () -> HttpClientExample.run(endpoints, http.uri(), ns + "/lock/http", ttl).verdict());
                scenario(verdicts, SlowZombieExample.SCENARIO,
                        () -> SlowZombieExample.run(endpoints, http.uri(), ns + "/lock/http-slow", ttl));
                scenario(verdicts, GrpcResource.SCENARIO, () -> GrpcResource.selfCheck(grpc.port()));
                scenario(verdicts, GrpcClientExample.SCENARIO, () -> GrpcClientExample.run(endpoints, "127.0.0.1",
                        grpc.port(), ns + "/lock/grpc", ttl).verdict());
            }
            scenario(verdicts, RWLockExample.SCENARIO,
                    () -> RWLockExample.run(endpoints, ns + "/rwlock/basic", ttl).verdict());
            scenario(verdicts, ElectionExample.SCENARIO,
                    () -> ElectionExample.run(endpoints, ns + "/election/basic", ttl).verdict());
            scenario(verdicts, SemaphoreExample.SCENARIO,
                    () -> SemaphoreExample.run(endpoints, ns + "/semaphore/basic", ttl));
            scenario(verdicts, RunnerExample.SCENARIO, () -> RunnerExample.run(endpoints, ns + "/election/runner"));
            scenario(verdicts, BootExample.SCENARIO, () -> bootExample(endpoints, ns + "/boot"));
        } catch (Exception e) {
            say.step("could not set up the demo: %s", e.getMessage() == null ? e : e.getMessage());
            Say.OUT.println("VERDICT demo: setup failed — FAILED");
            return 2;
        }
        long passed = verdicts.stream().filter(Verdict::ok).count();
        long failed = verdicts.size() - passed;
        Say.OUT.println();
        Say.OUT.println("Summary (" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) + " s):");
        for (Verdict v : verdicts) {
            Say.OUT.println("  " + v.line());
        }
        Say.OUT.println(passed + " passed, " + failed + " failed");
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
