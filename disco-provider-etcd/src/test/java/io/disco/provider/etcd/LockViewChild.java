package io.disco.provider.etcd;

import io.disco.client.FencedLocks;
import io.disco.lock.FencedLock;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A second process contending through a {@link FencedLock} view: {@code rounds} times, it locks, calls
 * the test's {@code /enter?token=} and {@code /exit?token=}, and unlocks; prints {@code DONE} at the end.
 *
 * <p>Arguments: endpoints (comma-separated), lock prefix, resource base URI, rounds.
 */
public final class LockViewChild {

    private LockViewChild() {}

    public static void main(String[] args) throws Exception {
        URI base = URI.create(args[2]);
        HttpClient http = HttpClient.newHttpClient();
        try (Client client = Client.builder().endpoints(args[0].split(",")).build();
                EtcdSession session = EtcdSession.open(client, Etcd.ttl(10));
                var service = session.newLock(args[1])) {
            FencedLock view = FencedLocks.of(service);
            for (int i = 0, n = Integer.parseInt(args[3]); i < n; i++) {
                view.lock();
                try {
                    call(http, base.resolve("/enter?token=" + view.token().value()));
                    call(http, base.resolve("/exit?token=" + view.token().value()));
                } finally {
                    view.unlock();
                }
            }
        }
        System.out.println("DONE");
    }

    static void call(HttpClient http, URI uri) throws Exception {
        int status = http.send(
                        HttpRequest.newBuilder(uri)
                                .timeout(Duration.ofSeconds(10))
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
        if (status != 200) {
            throw new IllegalStateException(uri + " answered " + status);
        }
    }
}
