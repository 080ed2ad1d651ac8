package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.disco.client.Disco;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.GuardFilter;
import io.disco.lock.FencedLock;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot web application with the starter's auto-configuration against a real backend (issue 31,
 * item 10; on every backend, issue 47): the guard on its patterns only with problem details, the actuator endpoint,
 * metrics, and the health contributor going DOWN when the backend is away past the TTL and UP when it is back
 * (last: it stops the backend's one member). The same application runs on etcd ({@link DiscoApplicationOnEtcdTest}),
 * on ZooKeeper ({@link DiscoApplicationOnZooKeeperTest}) and on Redis ({@link DiscoApplicationOnRedisTest}); the
 * subclasses only say where the backend is and how it is taken away. Where Spring Boot's Redis auto-configuration is on the
 * class path (in this module, and on Boot 4.1), on etcd and ZooKeeper it makes a Redis connection that disco leaves
 * alone.
 */
@SpringBootTest(
        classes = DiscoApplicationTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "disco.session.ttl=2s",
            "disco.etcd.request-timeout=2s",
            "disco.guard.http.enabled=true",
            "disco.guard.http.url-patterns=/orders/*",
            "disco.guard.http.key.source=path-variable",
            "disco.guard.http.key.name=order",
            "disco.guard.http.key.pattern=/orders/{order}",
            "management.endpoints.web.exposure.include=health,disco",
            "management.endpoint.health.show-details=always"
        })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class DiscoApplicationTest {

    /** Takes the backend away: its one member stops, and the client's owner is lost after the TTL. */
    abstract void stopBackend();

    /** Brings the backend back. */
    abstract void startBackend();

    /**
     * Asserts that the endpoint's answer names the key of a hold of {@code name} by {@code owner}, as the backend
     * writes it.
     */
    abstract void assertKey(String endpointAnswer, String name, String owner);

    /** @return whether the backend bounds the tokens issued (etcd's revision, a ZooKeeper write's zxid; not Redis) */
    boolean hasIssuedBound() {
        return true;
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @RestController
        static class Orders {
            @PostMapping("/orders/{order}")
            String write(@PathVariable String order, HttpServletRequest request) {
                return "written " + order + " with " + request.getAttribute(GuardFilter.TOKEN_ATTRIBUTE);
            }

            @GetMapping("/status")
            String status() {
                return "fine";
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    Disco disco;

    @Autowired
    MeterRegistry meters;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> send(String method, String path, FencingToken token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header(FencingHttp.HEADER, Long.toString(token.value()));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A token of a real hold, released at once. */
    private FencingToken token(String name) {
        FencedLock lock = disco.lock(name);
        lock.lock();
        try {
            return lock.token();
        } finally {
            lock.unlock();
        }
    }

    @Test
    @Order(1)
    void theGuardOnlyOnItsPatternsWithProblemDetails() throws Exception {
        String name = "/test/boot-app/" + UUID.randomUUID();
        FencingToken zombie = token(name);
        FencingToken current = token(name);
        assertThat(current.value()).isGreaterThan(zombie.value());

        assertThat(send("GET", "/status", null).statusCode())
                .as("not guarded: no pattern covers it")
                .isEqualTo(200);
        assertThat(send("GET", "/actuator/health/liveness", null).statusCode()).isNotEqualTo(400);

        HttpResponse<String> ok = send("POST", "/orders/42", current);
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).isEqualTo("written 42 with " + current);

        HttpResponse<String> stale = send("POST", "/orders/42", zombie);
        assertThat(stale.statusCode()).isEqualTo(409);
        assertThat(stale.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("application/problem+json"));
        assertThat(stale.body())
                .contains(
                        "\"type\":\"" + GuardProblemDetails.TYPE_BASE + "stale-token\"",
                        "\"status\":409",
                        "\"instance\":\"/orders/42\"",
                        "\"token\":" + zombie.value(),
                        "\"mark\":" + current.value());

        assertThat(send("POST", "/orders/43", zombie).statusCode())
                .as("a keyed guard: another order has its own mark")
                .isEqualTo(200);

        if (hasIssuedBound()) {
            // the backend's issued bound (etcd's revision, a ZooKeeper write's zxid): a token nobody issued moves no
            // mark
            FencingToken forged = FencingToken.of(current.value() + 1_000_000_000L);
            HttpResponse<String> notIssued = send("POST", "/orders/45", forged);
            assertThat(notIssued.statusCode()).isEqualTo(400);
            assertThat(notIssued.body()).contains(GuardProblemDetails.TYPE_BASE + "token-not-issued");
            assertThat(send("POST", "/orders/45", current).statusCode())
                    .as("the forged token raised no mark")
                    .isEqualTo(200);
        }

        HttpResponse<String> missing = send("POST", "/orders/42", null);
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains(GuardProblemDetails.TYPE_BASE + "malformed-token", "\"status\":400");
        assertThat(missing.body()).doesNotContain("\"token\"");

        await().atMost(Duration.ofSeconds(10))
                .until(() -> meters.find("disco.guard.requests")
                                .tag("resource", "http")
                                .tag("outcome", "stale")
                                .counter()
                        != null);
    }

    @Test
    @Order(2)
    void theEndpointListsWhatThisInstanceHolds() throws Exception {
        String name = "/test/boot-endpoint/" + UUID.randomUUID();
        FencedLock lock = disco.lock(name);
        lock.lock();
        try {
            HttpResponse<String> r = send("GET", "/actuator/disco", null);
            assertThat(r.statusCode()).isEqualTo(200);
            String lease = disco.status().owner().orElseThrow();
            assertThat(r.body())
                    .contains(
                            "\"state\":\"UP\"",
                            "\"lease\":\"" + lease + "\"",
                            "\"name\":\"" + name + "\"",
                            "\"token\":" + lock.token().value(),
                            "\"state\":\"HELD\"");
            assertKey(r.body(), name, lease);
        } finally {
            lock.unlock();
        }
        assertThat(send("GET", "/actuator/disco", null).body()).doesNotContain(name);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> meters.find("disco.acquisitions")
                                .tag("outcome", "acquired")
                                .timer()
                        != null);
    }

    @Test
    @Order(3)
    void restClientAndWebClientStampTheTokenOfTheHoldingThread() throws Exception {
        String base = "http://127.0.0.1:" + port;
        FencedLock lock = disco.lock("/test/boot-propagation/" + UUID.randomUUID());
        org.springframework.web.client.RestClient rest = org.springframework.web.client.RestClient.builder()
                .baseUrl(base)
                .requestInterceptor(FencingRequestInterceptor.of(lock))
                .build();
        org.springframework.web.reactive.function.client.WebClient web =
                org.springframework.web.reactive.function.client.WebClient.builder()
                        .baseUrl(base)
                        .clientConnector(new org.springframework.http.client.reactive.JdkClientHttpConnector())
                        .filter(FencingExchangeFilter.of(lock))
                        .build();
        lock.lock();
        try {
            String token = lock.token().toString();
            assertThat(rest.post().uri("/orders/77").retrieve().body(String.class))
                    .isEqualTo("written 77 with " + token);
            assertThat(web.post()
                            .uri("/orders/78")
                            .retrieve()
                            .bodyToMono(String.class)
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("written 78 with " + token);
        } finally {
            lock.unlock();
        }
        // not held by this thread: nothing is sent
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> rest.post().uri("/orders/77").retrieve().body(String.class))
                .isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    @Order(4)
    void healthDownWhileTheBackendIsAwayPastTheTtlAndUpWhenItIsBack() throws Exception {
        HttpResponse<String> up = send("GET", "/actuator/health/disco", null);
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body())
                .contains(
                        "\"status\":\"UP\"",
                        "\"lease\":\"" + disco.status().owner().orElseThrow() + "\"",
                        "\"remainingValidity\"")
                .doesNotContain("\"remainingValidity\":\"PT0S\"");

        stopBackend();
        try {
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> send("GET", "/actuator/health/disco", null).statusCode() == 503);
            HttpResponse<String> down = send("GET", "/actuator/health/disco", null);
            assertThat(down.body()).contains("\"status\":\"DOWN\"", "\"state\":\"HEALING\"", "\"lastProblem\"");
        } finally {
            startBackend();
        }
        await().atMost(Duration.ofSeconds(30))
                .until(() -> send("GET", "/actuator/health/disco", null).statusCode() == 200);
        assertThat(send("GET", "/actuator/health/disco", null).body()).contains("\"status\":\"UP\"");
    }
}
