package io.disco.examples.lock.http.resource;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.examples.Cli;
import io.disco.examples.Http;
import io.disco.examples.JsonText;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import io.disco.fencing.guard.GuardStore;
import io.disco.provider.etcd.EtcdIssuedBound;
import io.disco.provider.etcd.EtcdProvider;
import io.etcd.jetcd.Client;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * {@code lock/http/resource}: an HTTP resource on embedded Jetty 12 (ee10), protected by
 * {@link GuardFilter}.
 *
 * <ul>
 *   <li>{@code POST /write} (guarded): the body becomes the resource's data. Answers 200 with the
 *       accepted token, 400 for a missing or malformed {@value FencingHttp#HEADER} header or a token
 *       etcd never issued (above its current revision: {@link EtcdIssuedBound}), 409 for a stale
 *       token, 503 when a new owner's token cannot be confirmed with etcd in time.</li>
 *   <li>{@code GET /status} (not guarded): the high-water mark, the number of writes and the data,
 *       as JSON.</li>
 * </ul>
 * It listens on loopback only. Every request to {@code /write} is logged with its token and answer.
 * The guard admits writes in token order: a zombie's write still being handled (a slow body) when a
 * newer owner's arrives completes first, and the newer one waits for it (at most the guard's drain
 * timeout; after it, 503).
 *
 * <p>Run: {@code java ... io.disco.examples.lock.http.resource.HttpResource [--port 8080]
 * [--state-file PATH | --fence-from-etcd] [--endpoints host:port]}. With {@code --state-file} the
 * mark is kept in that file and survives a restart (even {@code kill -9}); with
 * {@code --fence-from-etcd} the mark starts at etcd's current revision, so every token issued
 * before the start is rejected. Either way the guard confirms each new owner's token with etcd
 * ({@link EtcdIssuedBound}), so a forged token cannot raise the mark.
 */
public final class HttpResource implements AutoCloseable {

    /** The scenario's name in its log and self-check verdict. */
    public static final String SCENARIO = "lock/http/resource";
    /** The port when none is given. */
    public static final int DEFAULT_PORT = 8080;

    private static final int MAX_BODY = 4096;
    /** The bound of each call of {@link #selfCheck}, on the monotonic clock ({@link Http}). */
    private static final Duration CALL = Duration.ofSeconds(5);

    private final Server server;
    private final Guard guard;
    private final int port;

    /** The protected data; its writes are applied in token order, under this object's monitor. */
    private static final class Data {
        private String value = "";
        private long writes;
    }

    private HttpResource(Server server, Guard guard, int port) {
        this.server = server;
        this.guard = guard;
        this.port = port;
    }

    /**
     * Runs the resource until the process is stopped.
     *
     * @param args {@code [--port N]}
     * @throws Exception if the server cannot start
     */
    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        Path stateFile = null;
        int i = rest.indexOf("--state-file");
        if (i >= 0) {
            if (i + 1 >= rest.size()) {
                throw new IllegalArgumentException("--state-file needs a path");
            }
            stateFile = Path.of(rest.remove(i + 1));
            rest.remove(i);
        }
        boolean fromEtcd = rest.remove("--fence-from-etcd");
        Cli cli = Cli.parse(rest.toArray(String[]::new), DEFAULT_PORT);
        Client client = Cli.etcdClient(cli.endpoints()); // for the life of the process
        Guard.Builder guard = Guard.builder().issuedBound(EtcdIssuedBound.of(client));
        Say say = new Say(SCENARIO);
        if (stateFile != null) {
            guard.store(GuardStore.file(stateFile));
        }
        if (fromEtcd) {
            FencingToken revision = EtcdProvider.currentRevision(client, Duration.ofSeconds(10));
            say.step("fencing from etcd's current revision %s: every older token is rejected", revision);
            guard.initialToken(revision);
        }
        HttpResource resource = start(cli.port(), guard.build());
        say.step(
                "listening on %s: POST /write (guarded by %s), GET /status; mark %s",
                resource.uri(),
                FencingHttp.HEADER,
                resource.guard().highWater().map(Object::toString).orElse("empty"));
        Runtime.getRuntime().addShutdownHook(new Thread(resource::close, "http-resource-stop"));
        resource.server.join();
    }

    /**
     * Starts the resource on loopback, its guard confirming new owners' tokens with etcd.
     *
     * @param port the port, 0 for any free port
     * @param client a client of the etcd cluster that issues the tokens; the caller closes it after
     *     the resource
     * @return the running resource; close it to stop it
     * @throws Exception if Jetty cannot start
     */
    public static HttpResource start(int port, Client client) throws Exception {
        return start(
                port, Guard.builder().issuedBound(EtcdIssuedBound.of(client)).build());
    }

    /**
     * Starts the resource on loopback with the given guard (for example one with a store).
     *
     * @param port the port, 0 for any free port
     * @param guard the guard of {@code POST /write}
     * @return the running resource; close it to stop it
     * @throws Exception if Jetty cannot start
     */
    public static HttpResource start(int port, Guard guard) throws Exception {
        Say say = new Say(SCENARIO);
        Data data = new Data();

        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        // Order matters: the log filter wraps the guard, so that it also sees the guard's rejections.
        context.addFilter(new FilterHolder(new LogFilter(say)), "/write", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(new GuardFilter(guard)), "/write", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(new ServletHolder(new WriteServlet(data)), "/write");
        context.addServlet(new ServletHolder(new StatusServlet(guard, data)), "/status");
        server.setHandler(context);
        server.setStopTimeout(2000);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw e;
        }
        return new HttpResource(server, guard, connector.getLocalPort());
    }

    /** @return the port the resource listens on */
    public int port() {
        return port;
    }

    /** @return the resource's base URI, {@code http://127.0.0.1:port} */
    public URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** @return the guard of {@code POST /write} */
    public Guard guard() {
        return guard;
    }

    /** Stops the server. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop the HTTP resource", e);
        }
    }

    /**
     * Checks the guard of a running resource the way a careless (or hostile) client would hit it: no
     * header, malformed headers, and a token nobody issued ({@code 2^63-1}), each must be answered 400
     * without changing the mark; {@code GET /status} must answer 200 without any header.
     *
     * @param base the resource's base URI
     * @return the verdict
     */
    public static Verdict selfCheck(URI base) {
        Say say = new Say(SCENARIO);
        HttpClient http = Http.client();
        List<String> wrong = new ArrayList<>();
        try {
            String before = get(http, base.resolve("/status"));
            List<List<String>> malformed = List.of(
                    List.of(),
                    List.of("abc"),
                    List.of("-1"),
                    List.of("0"),
                    List.of("0x10"),
                    List.of("1.5"),
                    List.of("99999999999999999999"),
                    List.of("5", "6"),
                    List.of(Long.toString(Long.MAX_VALUE)));
            for (List<String> values : malformed) {
                HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve("/write"))
                        .POST(HttpRequest.BodyPublishers.ofString("malformed"));
                for (String v : values) {
                    b.header(FencingHttp.HEADER, v);
                }
                HttpResponse<String> r = Http.send(http, b.build(), HttpResponse.BodyHandlers.ofString(), CALL);
                say.step(
                        "POST /write with %s %s -> %d %s",
                        FencingHttp.HEADER,
                        values.isEmpty() ? "(absent)" : values,
                        r.statusCode(),
                        r.body().strip());
                if (r.statusCode() != 400) {
                    wrong.add(values + " answered " + r.statusCode());
                }
            }
            String after = get(http, base.resolve("/status"));
            say.step("GET /status -> 200 %s", after);
            if (!before.equals(after)) {
                wrong.add("the status changed from " + before + " to " + after);
            }
        } catch (IOException e) {
            return new Verdict(SCENARIO, false, "step failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: interrupted");
        }
        return wrong.isEmpty()
                ? new Verdict(SCENARIO, true, "missing, malformed and never-issued tokens answered 400, mark unchanged")
                : new Verdict(SCENARIO, false, "guard let malformed or never-issued tokens through: " + wrong);
    }

    private static String get(HttpClient http, URI uri) throws IOException, InterruptedException {
        HttpResponse<String> r =
                Http.send(http, HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString(), CALL);
        if (r.statusCode() != 200) {
            throw new IOException("GET " + uri + " answered " + r.statusCode());
        }
        return r.body().strip();
    }

    /** Logs each request to {@code /write} with its token header and the answer. */
    private static final class LogFilter implements Filter {
        private final Say say;

        LogFilter(Say say) {
            this.say = say;
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest req = (HttpServletRequest) request;
            HttpServletResponse resp = (HttpServletResponse) response;
            chain.doFilter(request, response);
            List<String> tokens = Collections.list(req.getHeaders(FencingHttp.HEADER));
            say.step(
                    "%s %s %s=%s -> %d",
                    req.getMethod(),
                    req.getRequestURI(),
                    FencingHttp.HEADER,
                    tokens.isEmpty() ? "(absent)" : String.join(",", tokens),
                    resp.getStatus());
        }
    }

    /** Applies a write the guard accepted. */
    private static final class WriteServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Data data;

        WriteServlet(Data data) {
            this.data = data;
        }

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            FencingToken token = (FencingToken) req.getAttribute(GuardFilter.TOKEN_ATTRIBUTE);
            // The filter's admission lasts until this response is complete, so reading a slow body and
            // applying it happen before any write with a higher token starts: no check needed here.
            byte[] body = req.getInputStream().readNBytes(MAX_BODY);
            resp.setContentType("text/plain; charset=utf-8");
            synchronized (data) {
                data.value = new String(body, UTF_8);
                data.writes++;
            }
            resp.getWriter().println("accepted token " + token);
        }
    }

    /** The unguarded status page. */
    private static final class StatusServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient Guard guard;
        private final transient Data data;

        StatusServlet(Guard guard, Data data) {
            this.guard = guard;
            this.data = data;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String mark = guard.highWater().map(t -> Long.toString(t.value())).orElse("null");
            String json;
            synchronized (data) {
                json = "{\"highWater\":" + mark + ",\"writes\":" + data.writes + ",\"data\":\""
                        + JsonText.escape(data.value) + "\"}";
            }
            resp.setContentType("application/json");
            resp.getWriter().println(json);
        }
    }
}
