package io.disco.spring.boot;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.MalformedTokenException;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.BoundUnavailableException;
import io.disco.fencing.guard.DrainTimeoutException;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.GuardRejection;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.fencing.guard.TokenNotIssuedException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The guard for Spring WebFlux, with the contract of {@link GuardFilter}: on the paths it guards, a
 * request passes only with an {@value FencingHttp#HEADER} token its guard admits, and the admission
 * lasts until the exchange completes (normally, with an error, or cancelled), so that requests run in
 * token order. Rejections are the same RFC 9457 problem details as the servlet filter's
 * ({@link GuardProblemDetails}): 400 missing or malformed or not issued, 409 stale, 503 (with
 * {@code Retry-After: 1}) drain timeout or unavailable. The accepted token is the exchange attribute
 * {@value GuardFilter#TOKEN_ATTRIBUTE}. Admission may wait (for older requests to drain, for the issued
 * bound), so it runs on the bounded-elastic scheduler, never on an event-loop thread.
 */
public final class GuardWebFilter implements WebFilter {

    private final List<PathPattern> paths;
    private final Guard guard;
    private final KeyedGuard keyed;
    private final Function<ServerWebExchange, String> keyOf;

    private GuardWebFilter(
            List<PathPattern> paths, Guard guard, KeyedGuard keyed, Function<ServerWebExchange, String> keyOf) {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("paths must name at least one path pattern: there is no default");
        }
        this.paths = List.copyOf(paths);
        this.guard = guard;
        this.keyed = keyed;
        this.keyOf = keyOf;
    }

    /**
     * @param paths the path patterns guarded; at least one
     * @param guard the guard of the resource behind them
     * @return the filter
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code paths} is empty
     */
    public static GuardWebFilter of(List<PathPattern> paths, Guard guard) {
        return new GuardWebFilter(
                Objects.requireNonNull(paths, "paths"), Objects.requireNonNull(guard, "guard"), null, null);
    }

    /**
     * @param paths the path patterns guarded; at least one
     * @param guards one mark per resource key
     * @param keyOf names an exchange's resource key; null or blank is answered 400
     * @return the filter
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code paths} is empty
     */
    public static GuardWebFilter keyed(
            List<PathPattern> paths, KeyedGuard guards, Function<ServerWebExchange, String> keyOf) {
        return new GuardWebFilter(
                Objects.requireNonNull(paths, "paths"),
                null,
                Objects.requireNonNull(guards, "guards"),
                Objects.requireNonNull(keyOf, "keyOf"));
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
        if (paths.stream().noneMatch(p -> p.matches(path))) {
            return chain.filter(exchange);
        }
        return Mono.fromCallable(() -> admit(exchange))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(outcome -> {
                    if (outcome.rejection != null) {
                        return reject(exchange, outcome.rejection);
                    }
                    Guard.Admission admission = outcome.admission;
                    exchange.getAttributes().put(GuardFilter.TOKEN_ATTRIBUTE, admission.token());
                    return chain.filter(exchange).doFinally(signal -> admission.close());
                });
    }

    /** An admission or a rejection. */
    private record Outcome(Guard.Admission admission, GuardRejection rejection) {}

    private Outcome admit(ServerWebExchange exchange) {
        List<String> headers = exchange.getRequest().getHeaders().getOrEmpty(FencingHttp.HEADER);
        try {
            FencingToken token = FencingHttp.parseHeader(headers);
            Guard g = guard;
            if (g == null) {
                String key = keyOf.apply(exchange);
                if (key == null || key.isBlank()) {
                    return new Outcome(
                            null,
                            new GuardRejection(
                                    400,
                                    GuardRejection.Reason.NO_KEY,
                                    "no resource key in this request",
                                    Optional.of(token),
                                    Optional.empty()));
                }
                g = keyed.forKey(key);
            }
            return new Outcome(g.admit(token), null);
        } catch (MalformedTokenException
                | TokenStaleException
                | TokenNotIssuedException
                | DrainTimeoutException
                | BoundUnavailableException
                | UncheckedIOException
                | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new Outcome(null, GuardRejection.of(e));
        }
    }

    private static Mono<Void> reject(ServerWebExchange exchange, GuardRejection rejection) {
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.valueOf(rejection.status()));
        if (rejection.status() == 503) {
            response.getHeaders().set("Retry-After", "1");
        }
        response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        byte[] body = GuardProblemDetails.json(
                        rejection, exchange.getRequest().getPath().value())
                .getBytes(StandardCharsets.UTF_8);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
