package io.disco.fencing.guard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.testservers.ThreadPerTask;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ordered admission through {@link GuardFilter} in a real Jetty: a zombie's request still being
 * handled when the new owner's arrives writes before it, never after.
 *
 * <p>The servlet appends {@code "<token>"} to the history when it writes. A request with query
 * {@code ?hold=NAME} waits on the latch {@code NAME} before writing (a slow handler or a paused
 * zombie); {@code ?async=NAME} does the same in asynchronous mode, completing from another thread;
 * {@code ?fail} throws before writing.
 */
class GuardOrderJettyTest {

    /** A thread per task: these tasks block. */
    private static final java.util.concurrent.Executor THREADS = ThreadPerTask.DAEMON;

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<Long> history = new CopyOnWriteArrayList<>();
    private final Holds holds = new Holds();
    private Server server;
    private int port;
    private Guard guard;
    private KeyedGuard keyed;

    private final class Resource extends HttpServlet {
        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            FencingToken token = (FencingToken) req.getAttribute(GuardFilter.TOKEN_ATTRIBUTE);
            String hold = req.getParameter("hold");
            String async = req.getParameter("async");
            if (req.getParameter("fail") != null) {
                throw new IllegalStateException("handler failed");
            }
            if (async != null) {
                AsyncContext ctx = req.startAsync();
                ctx.setTimeout(0);
                holds.enter(async);
                CompletableFuture.runAsync(
                        () -> {
                            holds.awaitRelease(async);
                            history.add(token.value());
                            ctx.getResponse().setContentType("text/plain");
                            ctx.complete();
                        },
                        THREADS);
                return;
            }
            if (hold != null) {
                holds.hold(hold);
            }
            history.add(token.value());
            resp.setContentType("text/plain");
            resp.getWriter().print("wrote under " + token);
        }
    }

    @BeforeEach
    void start() throws Exception {
        guard = Guard.builder().drainTimeout(Duration.ofMillis(1500)).build();
        keyed = Guard.builder().drainTimeout(Duration.ofMillis(1500)).buildKeyed();
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        ServletContextHandler single = new ServletContextHandler();
        single.setContextPath("/r");
        single.addFilter(new FilterHolder(new GuardFilter(guard)), "/*", EnumSet.of(DispatcherType.REQUEST));
        single.addServlet(new ServletHolder(new Resource()), "/*");
        ServletContextHandler byKey = new ServletContextHandler();
        byKey.setContextPath("/locks");
        byKey.addFilter(
                new FilterHolder(new GuardFilter(
                        keyed,
                        r -> r.getPathInfo() == null ? null : r.getPathInfo().substring(1))),
                "/*",
                EnumSet.of(DispatcherType.REQUEST));
        byKey.addServlet(new ServletHolder(new Resource()), "/*");
        server.setHandler(new ContextHandlerCollection(single, byKey));
        server.start();
        port = connector.getLocalPort();
    }

    @AfterEach
    void stop() throws Exception {
        holds.releaseAll();
        server.stop();
    }

    private CompletableFuture<HttpResponse<String>> send(String path, long token) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header(FencingHttp.HEADER, Long.toString(token))
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(20))
                .build();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(CompletableFuture<HttpResponse<String>> f) throws Exception {
        return f.get(20, SECONDS);
    }

    /** What a test checks while the new owner's request waits for the zombie's. */
    private interface WhileWaiting {
        void check(CompletableFuture<HttpResponse<String>> owner) throws Exception;
    }

    /**
     * The zombie (token 5) sends a request that the servlet keeps running ({@code zombieQuery}), then the new owner
     * (6); once 6 is the guard's mark, {@code meanwhile} checks the owner's request waiting. The zombie's request is
     * then let go: both succeed, and the zombie's write comes before the owner's.
     */
    private void theNewOwnerWaitsForTheZombie(String zombieQuery, WhileWaiting meanwhile) throws Exception {
        CompletableFuture<HttpResponse<String>> zombie = send("/r/x?" + zombieQuery, 5);
        assertTrue(holds.awaitEntered("zombie"));
        CompletableFuture<HttpResponse<String>> owner = send("/r/x", 6);
        await().atMost(Duration.ofSeconds(5)).until(() -> guard.highWater().equals(Optional.of(FencingToken.of(6))));
        meanwhile.check(owner);
        holds.release("zombie");
        assertEquals(200, get(zombie).statusCode());
        assertEquals(200, get(owner).statusCode());
        assertEquals(List.of(5L, 6L), history);
    }

    @Test
    void theZombiesSlowRequestWritesBeforeTheNewOwnersNeverAfter() throws Exception {
        theNewOwnerWaitsForTheZombie("hold=zombie", owner -> {
            assertEquals(409, get(send("/r/x", 5)).statusCode(), "the zombie's next request is rejected at once");
            assertFalse(owner.isDone(), "the new owner waits while the zombie's request is running");
        });
    }

    @Test
    void afterTheDrainTimeoutTheNewOwnerIsRefusedWith503AndNothingOfItRuns() throws Exception {
        CompletableFuture<HttpResponse<String>> zombie = send("/r/x?hold=zombie", 5);
        assertTrue(holds.awaitEntered("zombie"));
        long start = System.nanoTime();
        HttpResponse<String> refused = get(send("/r/x", 6));
        assertEquals(503, refused.statusCode());
        assertEquals(Optional.of("1"), refused.headers().firstValue("Retry-After"));
        assertTrue(refused.body().contains("older tokens were still running"), refused.body());
        assertTrue(System.nanoTime() - start >= Duration.ofMillis(1500).toNanos());
        assertEquals(409, get(send("/r/x", 5)).statusCode(), "the refused token stays the mark");
        holds.release("zombie");
        assertEquals(200, get(zombie).statusCode());
        assertEquals(List.of(5L), history);
        assertEquals(200, get(send("/r/x", 6)).statusCode(), "the retry passes");
        assertEquals(List.of(5L, 6L), history);
    }

    @Test
    void anAsyncRequestHoldsItsAdmissionUntilItCompletes() throws Exception {
        theNewOwnerWaitsForTheZombie(
                "async=zombie",
                owner -> assertFalse(
                        owner.isDone(), "the async request's servlet has returned, but its response is not complete"));
    }

    @Test
    void aFailedHandlerReleasesItsAdmission() throws Exception {
        assertEquals(500, get(send("/r/x?fail", 5)).statusCode());
        long start = System.nanoTime();
        assertEquals(200, get(send("/r/x", 6)).statusCode());
        assertTrue(System.nanoTime() - start < Duration.ofMillis(1500).toNanos(), "6 did not wait for the failed 5");
    }

    @Test
    void sameTokenRequestsRunTogether() throws Exception {
        CompletableFuture<HttpResponse<String>> first = send("/r/x?hold=a", 7);
        assertTrue(holds.awaitEntered("a"));
        CompletableFuture<HttpResponse<String>> second = send("/r/x?hold=b", 7);
        assertTrue(holds.awaitEntered("b")); // entered while the first still runs
        holds.release("a");
        holds.release("b");
        assertEquals(200, get(first).statusCode());
        assertEquals(200, get(second).statusCode());
    }

    @Test
    void ownersOfTwoLocksInterleaveThroughOneKeyedFilterAndEachZombieIsRejected() throws Exception {
        assertEquals(200, get(send("/locks/a", 10)).statusCode());
        assertEquals(200, get(send("/locks/b", 11)).statusCode());
        assertEquals(200, get(send("/locks/a", 10)).statusCode(), "b's higher token does not reject a's owner");
        assertEquals(200, get(send("/locks/a", 12)).statusCode());
        assertEquals(200, get(send("/locks/b", 11)).statusCode());
        assertEquals(409, get(send("/locks/a", 10)).statusCode(), "a's zombie");
        assertEquals(200, get(send("/locks/b", 13)).statusCode());
        assertEquals(409, get(send("/locks/b", 11)).statusCode(), "b's zombie");
        HttpResponse<String> noKey = get(send("/locks/", 14));
        assertEquals(400, noKey.statusCode());
        assertTrue(noKey.body().contains("no resource key"), noKey.body());
        assertEquals(List.of(10L, 11L, 10L, 12L, 11L, 13L), history);
    }
}
