package io.disco.fencing.guard;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link GuardFilter} in a real Jetty 12 (ee10) server, driven by the JDK {@link HttpClient}, and by
 * a raw socket for the header values the JDK client refuses to send (non-ASCII).
 *
 * <p>Two contexts: {@code /guarded} has a filter constructed around a shared guard seeded at 10;
 * {@code /byname} has a filter created by Jetty from its class name with
 * {@code initialToken=100}.
 */
class GuardFilterJettyTest {

    private static final String PLAIN = "fencing token is a plain decimal number";

    private static Server server;
    private static int port;
    private static Guard guard;
    private static FilterHolder byName;
    private static final TokenServlet guardedServlet = new TokenServlet();
    private static final TokenServlet byNameServlet = new TokenServlet();
    private static final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Counts its invocations and answers with the token the filter left in the request. */
    static final class TokenServlet extends HttpServlet {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            calls.incrementAndGet();
            Object token = req.getAttribute(GuardFilter.TOKEN_ATTRIBUTE);
            resp.setContentType("text/plain; charset=utf-8");
            resp.getWriter().print((token instanceof FencingToken ? "token " : "not a token ") + token);
        }
    }

    record Response(int status, String contentType, String body) {}

    @BeforeAll
    static void start() throws Exception {
        guard = Guard.withInitialToken(10);
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);

        ServletContextHandler guarded = new ServletContextHandler();
        guarded.setContextPath("/guarded");
        guarded.addFilter(new FilterHolder(new GuardFilter(guard)), "/*", EnumSet.of(DispatcherType.REQUEST));
        guarded.addServlet(new ServletHolder(guardedServlet), "/*");

        ServletContextHandler named = new ServletContextHandler();
        named.setContextPath("/byname");
        byName = new FilterHolder(GuardFilter.class);
        byName.setInitParameter(GuardFilter.INITIAL_TOKEN_PARAM, "100");
        named.addFilter(byName, "/*", EnumSet.of(DispatcherType.REQUEST));
        named.addServlet(new ServletHolder(byNameServlet), "/*");

        server.setHandler(new ContextHandlerCollection(guarded, named));
        server.start();
        port = connector.getLocalPort();
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
    }

    /** Each header line a raw value (sent over the socket when {@code raw}), or none at all. */
    static Stream<Arguments> malformed() {
        return Stream.of(
                http("missing header", List.of(), "missing X-Fencing-Token header"),
                http(
                        "repeated header, different values",
                        List.of("11", "12"),
                        "repeated X-Fencing-Token header: send exactly one fencing token"),
                http(
                        "repeated header, same value",
                        List.of("11", "11"),
                        "repeated X-Fencing-Token header: send exactly one fencing token"),
                http("empty value", List.of(""), "fencing token is empty"),
                raw("only whitespace, trimmed to empty", " \t ", "fencing token is empty"),
                http("negative", List.of("-1"), "fencing token has a sign '-' at index 0: a " + PLAIN),
                http("negative zero", List.of("-0"), "fencing token has a sign '-' at index 0: a " + PLAIN),
                http("plus sign", List.of("+11"), "fencing token has a sign '+' at index 0: a " + PLAIN),
                http("zero", List.of("0"), "fencing token must be at least 1, got 0"),
                http("leading zeros", List.of("011"), "fencing token has a leading zero: write it without one"),
                http("all zeros", List.of("00"), "fencing token has a leading zero: write it without one"),
                http("hex", List.of("0x10"), "fencing token has an invalid character 'x' at index 1: a " + PLAIN),
                // Sent as UTF-8 bytes. Jetty hands header bytes above 0x7F (RFC 9110 obs-text) to the
                // application as ISO-8859-1, so the filter sees the first UTF-8 byte as a Latin-1
                // character: for full-width 1 (EF BC 91) that is U+00EF, for Arabic-Indic 3 (D9 A3) U+00D9.
                raw(
                        "full-width digits",
                        "\uff11\uff12",
                        "fencing token has an invalid character U+00EF at index 0: a " + PLAIN),
                raw(
                        "Arabic-Indic digit",
                        "\u0663",
                        "fencing token has an invalid character U+00D9 at index 0: a " + PLAIN),
                http("2^63, overflow", List.of("9223372036854775808"), "fencing token overflows 9223372036854775807"),
                http("far overflow", List.of("99999999999999999999999"), "fencing token overflows 9223372036854775807"),
                http("letters", List.of("abc"), "fencing token has an invalid character 'a' at index 0: a " + PLAIN),
                http(
                        "decimal point",
                        List.of("11.0"),
                        "fencing token has an invalid character '.' at index 2: a " + PLAIN),
                http("exponent", List.of("1e3"), "fencing token has an invalid character 'e' at index 1: a " + PLAIN),
                http(
                        "comma list in one header",
                        List.of("11,12"),
                        "fencing token has an invalid character ',' at index 2: a " + PLAIN),
                http(
                        "underscore",
                        List.of("1_000"),
                        "fencing token has an invalid character '_' at index 1: a " + PLAIN),
                http("inner space", List.of("11 12"), "fencing token has whitespace at index 2: a " + PLAIN),
                http("inner tab", List.of("11\t12"), "fencing token has whitespace at index 2: a " + PLAIN),
                http(
                        "parameter",
                        List.of("11;q=1"),
                        "fencing token has an invalid character ';' at index 2: a " + PLAIN));
    }

    private static Arguments http(String label, List<String> values, String reason) {
        return Arguments.of(label, values, false, reason);
    }

    private static Arguments raw(String label, String value, String reason) {
        return Arguments.of(label, List.of(value), true, reason);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedOrMissingTokensGet400AndNeverReachTheServlet(
            String label, List<String> values, boolean raw, String reason) throws Exception {
        assertRejected(values, raw, 400, reason);
    }

    /**
     * RFC 9110 makes whitespace around a field value part of the message syntax, not of the value:
     * Jetty strips it before any filter runs, so {@code " 5"} is the token 5 to the filter (here a
     * stale one, which shows what was parsed). The filter cannot see the raw bytes.
     */
    @ParameterizedTest(name = "[{0}]")
    @MethodSource("surroundingWhitespace")
    void whitespaceAroundTheValueIsStrippedByTheServer(String value) throws Exception {
        assertRejected(
                List.of(value),
                true,
                409,
                "stale fencing token 5: the resource has already accepted "
                        + guard.highWater().orElseThrow());
    }

    static Stream<String> surroundingWhitespace() {
        return Stream.of(" 5", "5 ", "\t5", "5\t", " \t5\t ");
    }

    @Test
    void staleTokenGets409WithTheReason() throws Exception {
        long mark = guard.highWater().orElseThrow().value();
        assertRejected(
                List.of(Long.toString(mark - 1)),
                false,
                409,
                "stale fencing token " + (mark - 1) + ": the resource has already accepted " + mark);
    }

    @Test
    void freshAndEqualTokensReachTheServletWithTheTokenAttribute() throws Exception {
        long fresh = guard.highWater().orElseThrow().value() + 1000;
        int calls = guardedServlet.calls.get();

        HttpResponse<String> r = client.send(
                FencingHttp.inject(request("/guarded/write"), FencingToken.of(fresh))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("token " + fresh, r.body());
        assertEquals(FencingToken.of(fresh), guard.highWater().orElseThrow());

        // the same owner writes again under the same token
        r = client.send(
                FencingHttp.inject(request("/guarded/write"), FencingToken.of(fresh))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(calls + 2, guardedServlet.calls.get());
        assertEquals(FencingToken.of(fresh), guard.highWater().orElseThrow());
    }

    @Test
    void filterCreatedByClassNameIsSeededFromItsInitParameter() throws Exception {
        Guard own = ((GuardFilter) byName.getFilter()).guard();
        assertEquals(FencingToken.of(100), own.highWater().orElseThrow());

        HttpResponse<String> r = client.send(
                request("/byname/x").header(FencingHttp.HEADER, "99").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(409, r.statusCode());
        assertEquals("stale fencing token 99: the resource has already accepted 100\n", r.body());
        assertEquals(0, byNameServlet.calls.get());

        r = client.send(
                request("/byname/x").header(FencingHttp.HEADER, "100").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("token 100", r.body());
        assertEquals(1, byNameServlet.calls.get());
        assertEquals(FencingToken.of(100), own.highWater().orElseThrow());
    }

    private static void assertRejected(List<String> values, boolean raw, int status, String reason) throws Exception {
        FencingToken markBefore = guard.highWater().orElseThrow();
        int callsBefore = guardedServlet.calls.get();

        Response r = raw ? sendRaw("/guarded/write", values) : sendHttp("/guarded/write", values);

        assertEquals(status, r.status(), r.body());
        assertEquals(
                "text/plain;charset=utf-8", r.contentType().replace(" ", "").toLowerCase(Locale.ROOT));
        assertEquals(reason + "\n", r.body());
        assertEquals(markBefore, guard.highWater().orElseThrow(), "the mark must not move on a rejection");
        assertEquals(callsBefore, guardedServlet.calls.get(), "the servlet must not be invoked on a rejection");
    }

    private static HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    }

    private static Response sendHttp(String path, List<String> values) throws Exception {
        HttpRequest.Builder b = request(path);
        for (String v : values) {
            b.header(FencingHttp.HEADER, v);
        }
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString(UTF_8));
        return new Response(
                r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }

    /** One HTTP/1.1 request over a plain socket, header values written as UTF-8 bytes. */
    private static Response sendRaw(String path, List<String> values) throws IOException {
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n");
        for (String v : values) {
            req.append(FencingHttp.HEADER).append(":").append(v).append("\r\n");
        }
        req.append("Connection: close\r\n\r\n");
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(req.toString().getBytes(UTF_8));
            String text = new String(s.getInputStream().readAllBytes(), UTF_8);
            int split = text.indexOf("\r\n\r\n");
            String head = text.substring(0, split);
            String contentType = "";
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith("content-type:")) {
                    contentType = line.substring("content-type:".length()).trim();
                }
                if (line.toLowerCase(Locale.ROOT).startsWith("transfer-encoding:")) {
                    throw new AssertionError("expected a response with Content-Length: " + head);
                }
            }
            return new Response(Integer.parseInt(head.substring(9, 12)), contentType, text.substring(split + 4));
        }
    }
}
