package io.disco.spring.boot;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingHttp;
import java.io.IOException;
import java.util.Objects;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Stamps the fencing token on every request of a {@code RestClient} or {@code RestTemplate}, in the
 * {@value FencingHttp#HEADER} header that the guard reads:
 * {@code RestClient.builder().requestInterceptor(FencingRequestInterceptor.of(lock))}.
 *
 * <p>The token is read when each request is sent. Given a {@code FencedLock} from the {@code Disco}
 * client, that is the token of the hold of the thread that sends: a thread that does not hold the lock
 * gets the lock's {@code IllegalMonitorStateException} and nothing is sent, and a hold that was lost
 * throws its lost exception; a request is never sent without a token, nor with another owner's. For
 * requests sent from another thread, take the token on the holding thread and give it as a lambda:
 * {@code FencingRequestInterceptor.of(() -> token)} ({@link Fenced} has one method).
 */
public final class FencingRequestInterceptor implements ClientHttpRequestInterceptor {

    private final Fenced token;

    private FencingRequestInterceptor(Fenced token) {
        this.token = token;
    }

    /**
     * @param fenced what gives the token of each request as it is sent: a grant, a leader's term, a
     *     thread-owned {@code FencedLock}, or a lambda ({@code () -> token}, {@code supplier::get}); it may
     *     throw to stop the request
     * @return an interceptor that stamps {@code fenced.token()} as it is when each request is sent
     * @throws NullPointerException if {@code fenced} is null
     */
    public static FencingRequestInterceptor of(Fenced fenced) {
        Objects.requireNonNull(fenced, "fenced");
        return new FencingRequestInterceptor(fenced);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        request.getHeaders().set(FencingHttp.HEADER, Long.toString(token.token().value()));
        return execution.execute(request, body);
    }
}
