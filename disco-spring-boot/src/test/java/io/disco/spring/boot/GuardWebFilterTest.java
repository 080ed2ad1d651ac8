package io.disco.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The WebFlux guard (issue 31, item 5) has the servlet filter's contract: only its paths, problem
 * details for 409 and 400, 503 after the drain timeout, and an admission that lasts until the exchange
 * completes or is cancelled. No etcd needed: the guard is local.
 */
class GuardWebFilterTest {

    private final AtomicInteger passed = new AtomicInteger();
    private final WebFilterChain chain = exchange -> {
        passed.incrementAndGet();
        return Mono.empty();
    };

    private static MockServerWebExchange post(String path, Long token) {
        MockServerHttpRequest.BaseBuilder<?> b = MockServerHttpRequest.post(path);
        if (token != null) {
            b.header(FencingHttp.HEADER, token.toString());
        }
        return MockServerWebExchange.from(b);
    }

    private static String body(MockServerWebExchange exchange) {
        return exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(5));
    }

    @Test
    void onlyItsPathsAndProblemDetails() {
        GuardWebFilter filter =
                GuardWebFilter.of(List.of(DiscoGuardAutoConfiguration.pathPattern("/orders/*")), Guard.create());

        MockServerWebExchange ok = post("/orders/1", 5L);
        filter.filter(ok, chain).block(Duration.ofSeconds(5));
        assertThat(passed).hasValue(1);
        assertThat((Object) ok.getAttribute(GuardFilter.TOKEN_ATTRIBUTE)).isEqualTo(FencingToken.of(5));

        MockServerWebExchange stale = post("/orders/1", 4L);
        filter.filter(stale, chain).block(Duration.ofSeconds(5));
        assertThat(stale.getResponse().getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
        assertThat(stale.getResponse().getHeaders().getContentType()).hasToString("application/problem+json");
        assertThat(body(stale))
                .contains(
                        GuardProblemDetails.TYPE_BASE + "stale-token",
                        "\"status\":409",
                        "\"token\":4",
                        "\"mark\":5",
                        "\"instance\":\"/orders/1\"");

        MockServerWebExchange missing = post("/orders/1", null);
        filter.filter(missing, chain).block(Duration.ofSeconds(5));
        assertThat(missing.getResponse().getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
        assertThat(body(missing)).contains("malformed-token");

        filter.filter(post("/health", null), chain).block(Duration.ofSeconds(5));
        assertThat(passed).as("an unguarded path passes without a token").hasValue(2);
    }

    @Test
    void theAdmissionLastsUntilTheExchangeEnds() {
        GuardWebFilter filter = GuardWebFilter.of(
                List.of(DiscoGuardAutoConfiguration.pathPattern("/orders/*")),
                Guard.builder().drainTimeout(Duration.ofMillis(200)).build());
        Disposable running =
                filter.filter(post("/orders/1", 7L), exchange -> Mono.never()).subscribe();
        try {
            MockServerWebExchange newer = post("/orders/1", 8L);
            filter.filter(newer, chain).block(Duration.ofSeconds(5));
            assertThat(newer.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
            assertThat(newer.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
            assertThat(body(newer)).contains("drain-timeout", "\"token\":8");
        } finally {
            running.dispose(); // cancelled: its admission ends
        }
        MockServerWebExchange after = post("/orders/1", 9L);
        filter.filter(after, chain).block(Duration.ofSeconds(5));
        assertThat(after.getResponse().getStatusCode()).isNull();
        assertThat(passed).hasValue(1);
    }

    @Test
    void registeredInAReactiveApplicationOnly() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DiscoGuardAutoConfiguration.class))
                .withPropertyValues(
                        "disco.guard.http.enabled=true",
                        "disco.guard.http.url-patterns=/orders/*",
                        "disco.guard.http.key.source=header",
                        "disco.guard.http.key.name=X-Order")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(GuardWebFilter.class)
                        .doesNotHaveBean(DiscoGuardAutoConfiguration.FILTER_NAME));
    }
}
