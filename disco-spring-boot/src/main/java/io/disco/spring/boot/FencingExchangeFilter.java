package io.disco.spring.boot;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import java.util.Objects;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * Stamps the fencing token on every request of a {@code WebClient}, in the {@value FencingHttp#HEADER}
 * header that the guard reads: {@code WebClient.builder().filter(FencingExchangeFilter.of(grant))}.
 *
 * <p>The token is read when the request is made, that is when the exchange is subscribed to, on the
 * subscribing thread. A grant, a leader's term or another {@link Fenced} value works from any thread; a
 * thread-owned {@code FencedLock} only when the thread that holds it subscribes (for example with
 * {@code block()}): otherwise the exchange fails with the lock's {@code IllegalMonitorStateException} and
 * nothing is sent. Take the token on the holding thread and pass it as a lambda for exchanges that run
 * elsewhere: {@code FencingExchangeFilter.of(() -> token)} ({@link Fenced} has one method).
 */
public final class FencingExchangeFilter implements ExchangeFilterFunction {

    private final Fenced token;

    private FencingExchangeFilter(Fenced token) {
        this.token = token;
    }

    /**
     * @param fenced what gives the token of each exchange: a grant, a leader's term, a thread-owned
     *     {@code FencedLock}, or a lambda ({@code () -> token}, {@code supplier::get}); it may throw to stop it
     * @return a filter that stamps {@code fenced.token()} as it is when each exchange is subscribed to
     * @throws NullPointerException if {@code fenced} is null
     */
    public static FencingExchangeFilter of(Fenced fenced) {
        Objects.requireNonNull(fenced, "fenced");
        return new FencingExchangeFilter(fenced);
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        FencingToken t;
        try {
            t = token.token();
        } catch (RuntimeException e) {
            return Mono.error(e);
        }
        return next.exchange(ClientRequest.from(request)
                .headers(h -> h.set(FencingHttp.HEADER, Long.toString(t.value())))
                .build());
    }
}
