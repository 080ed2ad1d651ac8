package io.disco.examples.lock.http.client;

import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.Http;
import io.disco.examples.Say;
import io.disco.examples.lock.LockZombie;
import io.disco.examples.lock.http.resource.HttpResource;
import io.disco.fencing.FencingHttp;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

/**
 * {@code lock/http/client}: the zombie scenario over HTTP against a running
 * {@link HttpResource}. Each owner stamps its writes with {@link FencingHttp#inject}; the zombie's
 * write is answered 409 by the resource's guard.
 *
 * <p>Run (after the resource): {@code java ... io.disco.examples.lock.http.client.HttpClientExample
 * [--endpoints host:port] [--port 8080]}, where the port is the resource's.
 */
public final class HttpClientExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "lock/http";
    /** The lock's etcd prefix. */
    public static final String LOCK_NAME = "/disco/examples/lock/http";

    /** The bound of each call to the resource, on the monotonic clock ({@link Http}). */
    private static final Duration CALL = Duration.ofSeconds(5);

    private HttpClientExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]] [--port N]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, HttpResource.DEFAULT_PORT);
        URI resource = URI.create("http://127.0.0.1:" + cli.port());
        System.exit(run(cli.endpoints(), resource, LOCK_NAME, LockZombie.DEFAULT_ZOMBIE_TTL)
                .verdict()
                .print());
    }

    /**
     * Runs the scenario against the resource at {@code resource}.
     *
     * @param endpoints etcd client URLs
     * @param resource the resource's base URI
     * @param lockName the lock's etcd prefix
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static LockZombie.Outcome run(List<String> endpoints, URI resource, String lockName, Duration zombieTtl) {
        return run(resource, (say, writer) -> LockZombie.run(say, endpoints, lockName, zombieTtl, writer));
    }

    /**
     * Runs the scenario against the resource at {@code resource}, on {@code backend}.
     *
     * @param backend where the owners are opened
     * @param resource the resource's base URI
     * @param lockName the lock's name
     * @param zombieTtl the TTL of A's lease
     * @return what happened
     */
    public static LockZombie.Outcome run(DemoBackend backend, URI resource, String lockName, Duration zombieTtl) {
        return run(resource, (say, writer) -> LockZombie.run(say, backend, lockName, zombieTtl, writer));
    }

    private static LockZombie.Outcome run(URI resource, BiFunction<Say, LockZombie.Writer, LockZombie.Outcome> story) {
        Say say = new Say(SCENARIO);
        HttpClient http = Http.client();
        say.step("resource: %s", resource);
        LockZombie.Outcome outcome = story.apply(say, (owner, token, data) -> {
            HttpRequest.Builder request =
                    HttpRequest.newBuilder(resource.resolve("/write")).POST(HttpRequest.BodyPublishers.ofString(data));
            FencingHttp.inject(request, token);
            HttpResponse<String> r = Http.send(http, request.build(), HttpResponse.BodyHandlers.ofString(), CALL);
            String body = r.body().strip();
            switch (r.statusCode()) {
                case 200:
                    return new LockZombie.Answer(true, "200", body);
                case 409:
                    return new LockZombie.Answer(false, "409", body);
                default:
                    throw new IOException("unexpected answer " + r.statusCode() + ": " + body);
            }
        });
        try {
            HttpResponse<String> status = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.resolve("/status")).GET().build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            say.step("GET /status -> %d %s", status.statusCode(), status.body().strip());
        } catch (IOException e) {
            say.step("GET /status failed: %s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return outcome;
    }
}
