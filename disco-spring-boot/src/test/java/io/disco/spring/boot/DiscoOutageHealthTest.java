package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.lock.FencedLock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The backend down under a web application whose requests call {@code lock()} (issue 45, item 3): with more such
 * requests than the server has threads, every one of them ends within the owner wait
 * ({@code disco.session.owner-wait}), so the actuator's health keeps answering (DOWN, with the reason) instead of
 * queueing behind parked threads for as long as the backend is down, which would have a liveness probe restart a
 * healthy pod; the health contributor itself answers at once. On etcd ({@link DiscoOutageHealthOnEtcdTest}), on
 * ZooKeeper ({@link DiscoOutageHealthOnZooKeeperTest}) and on Redis ({@link DiscoOutageHealthOnRedisTest}).
 */
@SpringBootTest(
        classes = DiscoOutageHealthTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "disco.session.ttl=2s",
            "disco.etcd.request-timeout=1s",
            "disco.session.owner-wait=2s",
            "server.tomcat.threads.max=10",
            "server.tomcat.threads.min-spare=10",
            "management.endpoints.web.exposure.include=health",
            "management.endpoint.health.show-details=always"
        })
abstract class DiscoOutageHealthTest {

    /** Takes the backend away: its one member stops. */
    abstract void stopBackend();

    /** Brings the backend back. */
    abstract void startBackend();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        /** The README's pattern of old: {@code lock()} on a request thread. */
        @RestController
        static class Work {
            private final Disco disco;

            Work(Disco disco) {
                this.disco = disco;
            }

            @GetMapping("/work")
            String work() {
                FencedLock lock = disco.lock("/outage-health/work");
                lock.lock();
                try {
                    return "done with " + lock.token();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    Disco disco;

    @Autowired
    DiscoHealthIndicator health;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private CompletableFuture<HttpResponse<String>> get(String path, Duration timeout) {
        return http.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(timeout)
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthAnswersWhileRequestsCallLockWithTheBackendDown() throws Exception {
        assertThat(get("/work", Duration.ofSeconds(10))
                        .get(20, TimeUnit.SECONDS)
                        .statusCode())
                .isEqualTo(200);
        stopBackend();
        try {
            await().atMost(Duration.ofSeconds(15)).until(() -> disco.status().state() == DiscoStatus.State.HEALING);
            // three times as many lock() requests as the server has threads
            List<CompletableFuture<HttpResponse<String>>> work = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                work.add(get("/work", Duration.ofSeconds(60)));
            }
            long t = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                assertThat(health.health().getStatus().getCode()).isEqualTo("DOWN");
            }
            long indicatorNanos = (System.nanoTime() - t) / 20;
            System.out.printf(
                    "the health contributor while requests wait in lock(): %.2f ms a call%n", indicatorNanos / 1e6);
            assertThat(indicatorNanos).isLessThan(TimeUnit.MILLISECONDS.toNanos(50));

            long asked = System.nanoTime();
            HttpResponse<String> down =
                    get("/actuator/health", Duration.ofSeconds(30)).get(40, TimeUnit.SECONDS);
            long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked);
            System.out.printf(
                    "GET /actuator/health behind 30 lock() requests on 10 threads: %d ms, %d %s%n",
                    answeredMs, down.statusCode(), down.body());
            assertThat(down.statusCode()).isEqualTo(503);
            assertThat(down.body()).contains("\"state\":\"HEALING\"", "\"lastProblem\"");
            assertThat(answeredMs)
                    .as("the health endpoint answered within the owner wait and a margin")
                    .isLessThan(8_000);
            for (CompletableFuture<HttpResponse<String>> w : work) {
                assertThat(w.get(30, TimeUnit.SECONDS).statusCode()).isGreaterThanOrEqualTo(500);
            }
        } finally {
            startBackend();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> disco.status().state() == DiscoStatus.State.UP);
        assertThat(get("/work", Duration.ofSeconds(10))
                        .get(20, TimeUnit.SECONDS)
                        .statusCode())
                .isEqualTo(200);
    }
}
