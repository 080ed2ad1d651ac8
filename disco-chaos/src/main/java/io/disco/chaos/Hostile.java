package io.disco.chaos;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The hostile owner, a process of its own beside the owners of every run: it holds no grant and
 * sends the resource requests with tokens nobody issued, {@code 2^63-1} and random values from
 * {@code 2^40} up (far above any revision a run reaches), reads and writes on every register the
 * resource has seen, every {@value #PACE_MILLIS} ms. Each answer is one line,
 * {@code <nanos> hostile HOSTILE <token> <key> <R|W> <status>}; {@code EXIT} on SIGTERM. The resource
 * must refuse them all ({@link HostileRequests}), whatever faults the nemesis injects: a single
 * admitted one would raise the mark above every legitimate owner's token.
 *
 * <p>Arguments: the resource's base URI, and {@code --reads-only} against a broken resource (one that
 * ignores tokens), so that its admitted requests change no register and the lost updates that run
 * reports are the frozen owners' alone. It reaches the resource directly, not through a proxy.
 */
final class Hostile {

    /** The owner id in the resource's history and the event lines. */
    static final String ID = "hostile";

    static final long PACE_MILLIS = 200;
    private static final long CALL_MILLIS = 5000;

    private Hostile() {}

    public static void main(String[] args) throws Exception {
        URI resource = URI.create(args[0]);
        boolean readsOnly = List.of(args).contains("--reads-only");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> say("EXIT"), "chaos-hostile-exit"));
        HttpClient http = HttpClient.newHttpClient();
        Random random = new Random();
        boolean maximal = true;
        while (true) {
            List<String> keys = keys(http, resource);
            for (String key : keys) {
                FencingToken forged =
                        FencingToken.of(maximal ? Long.MAX_VALUE : (1L << 40) + (random.nextLong() >>> 2));
                maximal = !maximal;
                boolean write = !readsOnly && random.nextBoolean();
                String path = (write ? "/write?expect=0&value=0&" : "/read?") + "key="
                        + URLEncoder.encode(key, StandardCharsets.UTF_8) + "&owner=" + ID;
                HttpRequest.Builder b = HttpRequest.newBuilder(resource.resolve(path));
                FencingHttp.inject(b, forged);
                b = write ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
                say("HOSTILE " + forged.value() + " " + key + " " + (write ? "W" : "R") + " "
                        + status(http, b.build()));
            }
            Thread.sleep(PACE_MILLIS); // the pace of the forged requests
        }
    }

    /** The registers the resource has seen ({@code GET /keys}), or the main one. */
    private static List<String> keys(HttpClient http, URI resource) {
        try {
            CompletableFuture<HttpResponse<String>> f = http.sendAsync(
                    HttpRequest.newBuilder(resource.resolve("/keys")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            List<String> keys = f.get(CALL_MILLIS, TimeUnit.MILLISECONDS)
                    .body()
                    .lines()
                    .filter(l -> !l.isBlank())
                    .toList();
            return keys.isEmpty() ? List.of(Owner.MAIN) : keys;
        } catch (Exception e) {
            return List.of(Owner.MAIN);
        }
    }

    /** The answer's status, or what kept it from coming, bounded on the monotonic clock. */
    private static String status(HttpClient http, HttpRequest request) {
        CompletableFuture<HttpResponse<String>> f = http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        try {
            return Integer.toString(f.get(CALL_MILLIS, TimeUnit.MILLISECONDS).statusCode());
        } catch (Exception e) {
            return "error:" + e.getClass().getSimpleName();
        } finally {
            f.cancel(true);
        }
    }

    private static void say(String line) {
        System.out.println(System.nanoTime() + " " + ID + " " + line);
        System.out.flush();
    }
}
