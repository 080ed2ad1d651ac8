package io.disco.examples.boot;

import io.disco.examples.Cli;
import io.disco.examples.Http;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingToken;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code boot/two-instances}: two instances of the example Spring Boot application
 * ({@code disco-spring-boot-example}, on the starter) as separate processes against one etcd; the leader is
 * frozen with SIGSTOP in the middle of a request that holds a lock.
 *
 * <ol>
 *   <li>instance-a starts and leads the report job; instance-b starts behind it. Both write to one ledger
 *       (instance-b's guarded {@code /ledger/*}).</li>
 *   <li>instance-a takes order 42's lock inside a request ({@code POST /orders/42}), reads its token, and is
 *       frozen (SIGSTOP) while it works, for longer than the lease TTL.</li>
 *   <li>instance-b books order 42 (its lock granted with a newer token once instance-a's lease expired)
 *       and leads the report job.</li>
 *   <li>instance-a resumes and writes order 42 with its old token: the ledger's guard answers 409 with a
 *       problem detail ({@code stale-token}), which the order request relays; instance-b still leads and
 *       instance-a does not.</li>
 * </ol>
 *
 * <p>Run: {@code java ... io.disco.examples.boot.BootExample --endpoints host:port} with
 * {@code -Ddisco.example.classpath=...} (the application's classpath, from
 * {@code disco-spring-boot-example/target/app.classpath}).
 */
public final class BootExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "boot/two-instances";

    /** The application's classpath file, relative to the repository root (written by its build). */
    public static final Path CLASSPATH_FILE = Path.of("disco-spring-boot-example", "target", "app.classpath");

    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final Duration STEP = Duration.ofSeconds(30);
    private static final String ORDER = "42";

    private BootExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     * @throws IOException if the classpath file cannot be read
     */
    public static void main(String[] args) throws IOException {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), classpath(CLASSPATH_FILE), "/disco/examples/boot", Duration.ofSeconds(2))
                .print());
    }

    /**
     * Reads the application's classpath.
     *
     * @param file the file its build wrote
     * @return the classpath
     * @throws IOException if the file is missing (the application was not built)
     */
    public static String classpath(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException(file + " is missing: build disco-spring-boot-example first ("
                    + "mvn -pl disco-spring-boot-example -am package -DskipTests)");
        }
        return Files.readString(file).trim();
    }

    /**
     * Runs the scenario.
     *
     * @param endpoints etcd client URLs
     * @param classpath the example application's runtime classpath
     * @param prefix the etcd prefix of the application's lock and election names
     * @param ttl the instances' lease TTL (whole seconds)
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(List<String> endpoints, String classpath, String prefix, Duration ttl) {
        Say say = new Say(SCENARIO);
        String step = "pick the ports";
        BootInstance a = null;
        BootInstance b = null;
        HttpClient http = Http.client();
        try {
            Path logs = Files.createTempDirectory("disco-boot-example");
            int portA = BootInstance.freePort();
            int portB = BootInstance.freePort();
            Map<String, String> common = Map.of(
                    "disco.etcd.endpoints",
                    String.join(",", endpoints),
                    "disco.session.ttl",
                    ttl.toSeconds() + "s",
                    "example.prefix",
                    prefix,
                    "example.ledger-url",
                    "http://127.0.0.1:" + portB);
            step = "start instance-a";
            a = BootInstance.start("instance-a", portA, classpath, logs, common);
            say.step("started instance-a (pid %d, %s, log %s); waiting until it leads", a.pid(), a.uri(), a.log());
            Map<String, String> aLeads = a.awaitStatus(s -> "true".equals(s.get("leading")), STARTUP, "leading");
            FencingToken termA = FencingToken.parse(aLeads.get("leader-token"));
            say.step("instance-a leads the report job with token %s", termA);
            step = "start instance-b";
            b = BootInstance.start("instance-b", portB, classpath, logs, common);
            say.step("started instance-b (pid %d, %s): it serves the ledger both write to", b.pid(), b.uri());
            b.awaitStatus(s -> "false".equals(s.get("leading")), STARTUP, "up, behind instance-a");

            step = "instance-a takes order " + ORDER + "'s lock in a request";
            long work = ttl.toMillis() + 1_000;
            CompletableFuture<HttpResponse<String>> late =
                    http.sendAsync(post(a, ORDER, work), HttpResponse.BodyHandlers.ofString());
            Map<String, String> holding = a.awaitStatus(
                    s -> s.getOrDefault("holding", "").startsWith(ORDER + ":"), STEP, "holding order " + ORDER);
            FencingToken lockA = FencingToken.parse(holding.get("holding").substring(ORDER.length() + 1));
            step = "freeze instance-a";
            a.freeze();
            say.step(
                    "instance-a holds order %s's lock with token %s and works; frozen (SIGSTOP) for longer than"
                            + " its %d s TTL",
                    ORDER, lockA, ttl.toSeconds());

            step = "instance-b books order " + ORDER;
            HttpResponse<String> booked =
                    Http.send(http, post(b, ORDER, 0), HttpResponse.BodyHandlers.ofString(), STEP);
            say.step(
                    "instance-b books order %s -> %d %s",
                    ORDER, booked.statusCode(), booked.body().trim());
            step = "instance-b leads";
            Map<String, String> bLeads = b.awaitStatus(s -> "true".equals(s.get("leading")), STEP, "leading");
            FencingToken termB = FencingToken.parse(bLeads.get("leader-token"));
            say.step("instance-b leads the report job with token %s", termB);

            step = "resume instance-a";
            a.resume();
            HttpResponse<String> zombie = Http.await(late, STEP, "POST " + a.uri() + "/orders/" + ORDER);
            String type = zombie.headers().firstValue("Content-Type").orElse("");
            say.step(
                    "instance-a resumed (SIGCONT) and wrote order %s with token %s -> %d %s %s",
                    ORDER, lockA, zombie.statusCode(), type, zombie.body().trim());
            step = "instance-a steps down";
            a.awaitStatus(s -> "false".equals(s.get("leading")), STEP, "no longer leading");
            Map<String, String> bStill = b.awaitStatus(s -> "true".equals(s.get("leading")), STEP, "still leading");
            say.step("instance-a no longer leads; instance-b leads with token %s", bStill.get("leader-token"));

            boolean rejected = zombie.statusCode() == 409
                    && type.startsWith("application/problem+json")
                    && zombie.body().contains("stale-token");
            boolean ordered = termB.isNewerThan(termA)
                    && booked.statusCode() == 200
                    && FencingToken.parse(bStill.get("leader-token")).equals(termB);
            if (!rejected || !ordered) {
                return new Verdict(
                        SCENARIO,
                        false,
                        "late write answered " + zombie.statusCode() + " " + type + " "
                                + zombie.body().trim() + ", instance-b booked " + booked.statusCode() + ", terms "
                                + termA
                                + " then " + termB);
            }
            return new Verdict(
                    SCENARIO,
                    true,
                    "frozen leader's late write rejected (409 problem detail)," + " the other instance leads");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: " + step + ": interrupted");
        } catch (Exception e) {
            for (BootInstance i : new BootInstance[] {a, b}) {
                if (i != null) {
                    say.step("%s's log ends with:%n%s", i.name(), i.logTail(30));
                }
            }
            return new Verdict(SCENARIO, false, "step failed: " + step + ": " + e);
        } finally {
            for (BootInstance i : new BootInstance[] {b, a}) {
                if (i != null) {
                    i.close();
                }
            }
        }
    }

    private static HttpRequest post(BootInstance i, String order, long workMillis) {
        return HttpRequest.newBuilder(i.uri().resolve("/orders/" + order + "?workMillis=" + workMillis))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build();
    }
}
