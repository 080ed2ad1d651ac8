package io.disco.examples;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The examples' HTTP calls, bounded on the monotonic clock.
 *
 * <p>The JDK 17 {@link HttpClient} measures both its request timeout
 * ({@link HttpRequest.Builder#timeout}) and its connect timeout ({@link HttpClient.Builder#connectTimeout})
 * on the wall clock: its timer events hold an {@code Instant.now()} deadline. Under a wall clock stepped
 * forward by 600 s (libfaketime, monotonic clock untouched) a request with a 10 s timeout failed
 * after 3 s, and so did a connect with a 10 s connect timeout; stepped back, the same request was
 * still waiting after 60 s. A client of a fenced resource must not lose or stretch its calls when an
 * operator or NTP steps the clock, so the examples set neither timeout: every call waits on its
 * future with {@link CompletableFuture#get(long, TimeUnit)}, which counts on the monotonic clock, and
 * the bound covers connecting too.
 */
public final class Http {

    private Http() {}

    /**
     * @return a new HTTP/1.1 client without a connect timeout: the calls' bound, on the monotonic clock,
     *     covers connecting
     */
    public static HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * Sends {@code request} and waits for its response for {@code timeout} on the monotonic clock.
     *
     * @param http the client
     * @param request the request; it should set no {@link HttpRequest.Builder#timeout timeout} of its own
     * @param body how to read the response's body
     * @param timeout how long to wait for the whole exchange, connecting included
     * @param <T> the body's type
     * @return the response
     * @throws HttpTimeoutException if no response came within {@code timeout}; the exchange is cancelled
     * @throws IOException if the exchange failed
     * @throws InterruptedException if interrupted while waiting; the exchange is cancelled
     */
    public static <T> HttpResponse<T> send(
            HttpClient http, HttpRequest request, HttpResponse.BodyHandler<T> body, Duration timeout)
            throws IOException, InterruptedException {
        return await(http.sendAsync(request, body), timeout, request.method() + " " + request.uri());
    }

    /**
     * Waits for an exchange already started with {@link HttpClient#sendAsync}, for {@code timeout} on
     * the monotonic clock.
     *
     * @param exchange the response's future
     * @param timeout how long to wait from now
     * @param what the request, for the timeout's message (e.g. {@code "POST http://host/write"})
     * @param <T> the body's type
     * @return the response
     * @throws HttpTimeoutException if no response came within {@code timeout}; the exchange is cancelled
     * @throws IOException if the exchange failed
     * @throws InterruptedException if interrupted while waiting; the exchange is cancelled
     */
    public static <T> HttpResponse<T> await(CompletableFuture<HttpResponse<T>> exchange, Duration timeout, String what)
            throws IOException, InterruptedException {
        try {
            return exchange.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            exchange.cancel(true);
            throw new HttpTimeoutException(what + ": no response within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            exchange.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IOException(what + " failed", cause);
        }
    }
}
