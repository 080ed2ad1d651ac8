package io.disco.examples.lock.http.client;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.Http;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.examples.lock.LockZombie;
import io.disco.examples.lock.http.resource.HttpResource;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.SubmissionPublisher;

/**
 * {@code lock/http/slow-zombie}: the zombie's write is still being handled when the new owner
 * writes. A starts a write with a body it sends slowly, then freezes past its lease; B acquires the
 * lock and writes; then A wakes and sends the rest of its body. Without ordered admission the
 * resource would apply B's write first and A's stale one after it, losing B's update. The guard's
 * admission makes B's write wait until A's request, admitted while A still held the lock, has
 * completed: the resource applies A's write, then B's, and B's data stands. A's next write is
 * answered 409.
 *
 * <p>Run (after the resource): {@code java ... io.disco.examples.lock.http.client.SlowZombieExample
 * [--endpoints host:port] [--port 8080]}.
 */
public final class SlowZombieExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "lock/http/slow-zombie";

    private static final Duration WAIT = Duration.ofSeconds(15);

    private SlowZombieExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]] [--port N]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, HttpResource.DEFAULT_PORT);
        URI resource = URI.create("http://127.0.0.1:" + cli.port());
        System.exit(run(cli.endpoints(), resource, "/disco/examples/lock/http-slow", LockZombie.DEFAULT_ZOMBIE_TTL)
                .print());
    }

    /**
     * Runs the scenario against the resource at {@code resource}.
     *
     * @param endpoints etcd client URLs
     * @param resource the resource's base URI
     * @param lockName the lock's etcd prefix
     * @param zombieTtl the TTL of A's lease
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(List<String> endpoints, URI resource, String lockName, Duration zombieTtl) {
        DemoBackend backend;
        try {
            backend = DemoBackend.etcd(endpoints);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: connect to etcd " + endpoints + ": interrupted");
        } catch (Exception e) {
            return new Verdict(SCENARIO, false, "step failed: connect to etcd " + endpoints + ": " + e);
        }
        try (backend) {
            return run(backend, resource, lockName, zombieTtl);
        }
    }

    /**
     * Runs the scenario against the resource at {@code resource}, on {@code demo}.
     *
     * @param demo where the owners are opened
     * @param resource the resource's base URI
     * @param lockName the lock's name
     * @param zombieTtl the TTL of A's lease
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(DemoBackend demo, URI resource, String lockName, Duration zombieTtl) {
        TestableBackend backend = demo.backend();
        Say say = new Say(SCENARIO);
        HttpClient http = Http.client();
        String step = "A: acquire the lock";
        try (SubmissionPublisher<ByteBuffer> slowBody = new SubmissionPublisher<>()) {
            FencingToken tokenA;
            FencingToken tokenB;
            CompletableFuture<HttpResponse<String>> writeA;
            CompletableFuture<HttpResponse<String>> writeB;
            try (DiscoBackend.Owner sessionA = backend.open(zombieTtl);
                    LockService lockA = sessionA.newLock(lockName)) {
                Grant a = lockA.lock(WAIT);
                tokenA = a.token();
                say.step("A acquired the lock: fencing token %s (lease TTL %d s)", tokenA, zombieTtl.toSeconds());

                step = "A: start a write with a slow body";
                writeA = http.sendAsync(
                        post(resource, tokenA, HttpRequest.BodyPublishers.fromPublisher(slowBody)),
                        HttpResponse.BodyHandlers.ofString());
                slowBody.submit(UTF_8.encode("written by A "));
                awaitMark(http, resource, tokenA);
                say.step("A's write is admitted with token %s and half sent; A freezes mid-upload", tokenA);
                backend.freeze(sessionA);

                step = "B: acquire the lock after A's lease expired";
                try (DiscoBackend.Owner sessionB = backend.open();
                        LockService lockB = sessionB.newLock(lockName)) {
                    Grant b = lockB.lock(zombieTtl.plus(WAIT));
                    tokenB = b.token();
                    say.step("B acquired the lock: fencing token %s (A's was %s)", tokenB, tokenA);
                    step = "B: write";
                    writeB = http.sendAsync(
                            post(resource, tokenB, HttpRequest.BodyPublishers.ofString("written by B")),
                            HttpResponse.BodyHandlers.ofString());
                    awaitMark(http, resource, tokenB);
                    boolean waited = !writeB.isDone();
                    say.step(
                            "B's write arrives while A's request is still running: %s",
                            waited
                                    ? "it waits for it"
                                    : "it was answered at once ("
                                            + writeB.join().statusCode() + ")");

                    step = "A (zombie): wake up and finish the upload";
                    slowBody.submit(UTF_8.encode("(slow upload)"));
                    slowBody.close();
                    HttpResponse<String> ra = Http.await(writeA, WAIT, "A's write");
                    say.step(
                            "A's admitted write completes -> %d %s",
                            ra.statusCode(), ra.body().strip());
                    HttpResponse<String> rb = Http.await(writeB, WAIT, "B's write");
                    say.step(
                            "then B's write runs -> %d %s",
                            rb.statusCode(), rb.body().strip());

                    step = "A (zombie): write again";
                    HttpResponse<String> again = Http.send(
                            http,
                            post(resource, tokenA, HttpRequest.BodyPublishers.ofString("written by zombie A")),
                            HttpResponse.BodyHandlers.ofString(),
                            WAIT);
                    say.step("zombie A writes again with token %s -> %d", tokenA, again.statusCode());
                    String status = get(http, resource.resolve("/status"));
                    say.step("GET /status -> %s", status);
                    lockB.unlock();

                    boolean bStands = status.contains("\"data\":\"written by B\"");
                    if (!waited || ra.statusCode() != 200 || rb.statusCode() != 200 || !bStands) {
                        return new Verdict(
                                SCENARIO,
                                false,
                                "STALE WRITE LANDED AFTER THE NEW OWNER'S: B waited=" + waited + ", A "
                                        + ra.statusCode() + ", B " + rb.statusCode() + ", " + status);
                    }
                    if (again.statusCode() != 409) {
                        return new Verdict(SCENARIO, false, "ZOMBIE WRITE ACCEPTED (" + again.statusCode() + ")");
                    }
                    return new Verdict(
                            SCENARIO,
                            true,
                            "in-flight zombie write completed before B's, B's data stands,"
                                    + " next zombie write rejected (409)");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: " + step + ": interrupted");
        } catch (Exception e) {
            return new Verdict(SCENARIO, false, "step failed: " + step + ": " + e);
        }
    }

    private static HttpRequest post(URI resource, FencingToken token, HttpRequest.BodyPublisher body) {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(resource.resolve("/write")).POST(body);
        FencingHttp.inject(request, token);
        return request.build();
    }

    /** Waits until the resource's mark is {@code token}: the request carrying it has reached the guard. */
    private static void awaitMark(HttpClient http, URI resource, FencingToken token)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String want = "\"highWater\":" + token.value() + ",";
        while (!get(http, resource.resolve("/status")).contains(want)) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the resource never saw token " + token);
            }
            Thread.sleep(10);
        }
    }

    private static String get(HttpClient http, URI uri) throws IOException, InterruptedException {
        return Http.send(
                        http,
                        HttpRequest.newBuilder(uri).GET().build(),
                        HttpResponse.BodyHandlers.ofString(),
                        Duration.ofSeconds(5))
                .body()
                .strip();
    }
}
