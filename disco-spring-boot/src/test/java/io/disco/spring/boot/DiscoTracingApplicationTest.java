package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.disco.client.Disco;
import io.disco.lock.FencedLock;
import io.disco.testservers.EtcdExtension;
import io.micrometer.tracing.exporter.FinishedSpan;
import io.micrometer.tracing.exporter.SpanReporter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.micrometer.tracing.test.autoconfigure.AutoConfigureTracing;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A traced request (issue 47, item 3): a Spring Boot web application with the starter, a real tracer (Brave, through
 * Micrometer Tracing, every request sampled) reporting to memory, against a real etcd. A request that locks an order
 * and writes with the token has, in its trace, the lock's wait and hold as children of its server span, with that
 * token.
 */
@SpringBootTest(
        classes = DiscoTracingApplicationTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"disco.session.ttl=5s", "management.tracing.sampling.probability=1.0"})
@AutoConfigureTracing
class DiscoTracingApplicationTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** The spans the tracer finished, in memory. */
    static final class Spans implements SpanReporter {
        final List<FinishedSpan> finished = new CopyOnWriteArrayList<>();

        @Override
        public void report(FinishedSpan span) {
            finished.add(span);
        }

        List<FinishedSpan> named(String name) {
            return finished.stream().filter(s -> s.getName().equals(name)).toList();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        EtcdConnectionDetails testEtcd() {
            return EtcdConnectionDetails.of(ETCD.cluster().endpoints());
        }

        @Bean
        Spans spans() {
            return new Spans();
        }

        @RestController
        static class Orders {
            private final Disco disco;

            Orders(Disco disco) {
                this.disco = disco;
            }

            /** Locks the order, "writes" with the token (returns it), unlocks. */
            @PostMapping("/orders/{order}")
            String write(@PathVariable String order) throws InterruptedException {
                FencedLock lock = disco.lock("/test/tracing/orders/" + order);
                if (!lock.tryLock(10, TimeUnit.SECONDS)) {
                    return "busy";
                }
                try {
                    return lock.token().toString();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    Spans spans;

    @Test
    void aRequestsTraceShowsItsLockWaitAndTheTokenItHeld() throws Exception {
        String order = UUID.randomUUID().toString();
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/" + order))
                                .timeout(Duration.ofSeconds(20))
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        String token = response.body();
        assertThat(token).matches("\\d+");

        await().atMost(Duration.ofSeconds(10))
                .until(() -> !spans.named("http post /orders/{order}").isEmpty());
        FinishedSpan server = spans.named("http post /orders/{order}").get(0);
        FinishedSpan wait = spans.named("lock wait").stream()
                .filter(s -> s.getTraceId().equals(server.getTraceId()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no lock wait in the request's trace: " + spans.finished));
        FinishedSpan hold = spans.named("lock hold").stream()
                .filter(s -> s.getTraceId().equals(server.getTraceId()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no lock hold in the request's trace: " + spans.finished));

        assertThat(wait.getParentId()).isEqualTo(server.getSpanId());
        assertThat(hold.getParentId()).isEqualTo(server.getSpanId());
        String name = "/test/tracing/orders/" + order;
        assertThat(wait.getTags())
                .containsEntry("disco.primitive", "lock")
                .containsEntry("disco.outcome", "acquired")
                .containsEntry("disco.name", name)
                .containsEntry("disco.token", token);
        assertThat(hold.getTags())
                .containsEntry("disco.outcome", "released")
                .containsEntry("disco.name", name)
                .containsEntry("disco.token", token);
        assertThat(wait.getEndTimestamp()).isBeforeOrEqualTo(hold.getStartTimestamp());
        assertThat(hold.getEndTimestamp()).isBeforeOrEqualTo(server.getEndTimestamp());
    }
}
