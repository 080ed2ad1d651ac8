package io.disco.chaos;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An owner process of the lock workload: loops acquire → read → work → write(read + 1) → release
 * against the resource, through its own TCP proxies to etcd, and prints one line per event:
 * {@code <nanos> <owner> GRANT <token>}, {@code READ <token> <status> <value>},
 * {@code WRITE <token> <status>}, {@code RELEASING <token>} (before the release call),
 * {@code RELEASE <token>}, {@code DONE <lease>}, {@code ERROR <what>}.
 * A new session replaces a lost one. On SIGTERM it closes its session, so that no key is left.
 *
 * <p>Arguments: owner id, etcd endpoints (comma-separated, its proxies), resource base URI, lock name,
 * TTL seconds, milliseconds of work between the read and the write.
 */
public final class OwnerMain {

    private static final Duration CALL = Duration.ofSeconds(5);

    private OwnerMain() {
    }

    static void say(String owner, String event) {
        synchronized (System.out) {
            System.out.println(System.nanoTime() + " " + owner + " " + event);
            System.out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        String owner = args[0];
        String[] endpoints = args[1].split(",");
        URI resource = URI.create(args[2]);
        String name = args[3];
        Duration ttl = Duration.ofSeconds(Long.parseLong(args[4]));
        long workMillis = Long.parseLong(args[5]);
        HttpClient http = HttpClient.newBuilder().connectTimeout(CALL).build();
        Client client = Client.builder().endpoints(endpoints).interceptor(EtcdDeadlines.unary(Duration.ofSeconds(2))).build();
        AtomicReference<EtcdSession> current = new AtomicReference<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            EtcdSession s = current.get();
            if (s != null) {
                s.close();
            }
            say(owner, "EXIT");
        }));
        EtcdOptions options = EtcdOptions.builder().ttl(ttl).requestTimeout(Duration.ofSeconds(2)).build();
        while (true) {
            EtcdSession session;
            try {
                session = EtcdSession.open(client, options);
            } catch (RuntimeException e) {
                say(owner, "ERROR session " + String.valueOf(e.getMessage()).replace('\n', ' '));
                Thread.sleep(200); // the pace of retries while etcd cannot be reached
                continue;
            }
            current.set(session);
            long lease = session.leaseId();
            session.done().thenRun(() -> say(owner, "DONE " + Long.toHexString(lease)));
            try (LockService lock = session.newLock(name)) {
                while (!session.done().toCompletableFuture().isDone()) {
                    Grant g;
                    try {
                        g = lock.lock(Duration.ofSeconds(10));
                    } catch (TimeoutException e) {
                        continue;
                    }
                    FencingToken t = g.token();
                    say(owner, "GRANT " + t.value());
                    HttpResponse<String> read = call(http, resource.resolve("/read?owner=" + owner), t, false);
                    say(owner, "READ " + t.value() + " " + read.statusCode() + " " + read.body().strip());
                    if (read.statusCode() == 200) {
                        Thread.sleep(workMillis); // the owner's work between its read and its write
                        long v = Long.parseLong(read.body().strip());
                        HttpResponse<String> write = call(http, resource.resolve("/write?owner=" + owner + "&expect=" + v
                                + "&value=" + (v + 1)), t, true);
                        say(owner, "WRITE " + t.value() + " " + write.statusCode());
                    }
                    // The hold ends when the owner gives it up: the next grant may come before unlock() returns.
                    say(owner, "RELEASING " + t.value());
                    lock.unlock();
                    say(owner, "RELEASE " + t.value());
                }
            } catch (LockLostException e) {
                say(owner, "LOST " + e.getMessage().replace('\n', ' '));
            } catch (RuntimeException | java.io.IOException e) {
                // DiscoException (etcd failed), IllegalStateException (the session was lost before the
                // service was made): a new session
                say(owner, "ERROR " + e.getClass().getSimpleName() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
            session.close();
        }
    }

    private static HttpResponse<String> call(HttpClient http, URI uri, FencingToken token, boolean write) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(CALL);
        FencingHttp.inject(b, token);
        b = write ? b.POST(HttpRequest.BodyPublishers.noBody()) : b.GET();
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
