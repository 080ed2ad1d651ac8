package io.disco.testservers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Asking an etcd member's {@code /health} endpoint whether it is healthy, with bounded waits. */
final class MemberHealth {

    /** How long a cluster or a restarted member has to become healthy. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);
    /** The client for plain HTTP members. */
    static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(REQUEST_TIMEOUT)
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    private MemberHealth() {}

    /** @return {@link #HTTP} without TLS, else a client that trusts {@code tls}'s CA (and presents its client certificate) */
    static HttpClient client(EtcdTls tls) {
        if (tls == null) {
            return HTTP;
        }
        return HttpClient.newBuilder()
                .connectTimeout(REQUEST_TIMEOUT)
                .version(HttpClient.Version.HTTP_1_1)
                .sslContext(tls.sslContext())
                .build();
    }

    /** @return whether {@code endpoint/health} answers 200 with {@code "health":"true"} within 1 s */
    static boolean healthy(HttpClient http, String endpoint) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(endpoint + "/health"))
                .timeout(REQUEST_TIMEOUT)
                .GET()
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200
                    && response.body().replace(" ", "").contains("\"health\":\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking " + endpoint + "/health", e);
        }
    }
}
