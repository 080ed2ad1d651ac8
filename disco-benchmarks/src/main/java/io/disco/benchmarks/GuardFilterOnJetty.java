package io.disco.benchmarks;

import static io.disco.benchmarks.Bench.log;

import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.Locale;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Case "guard-filter" (section 5): HTTP requests to a Jetty servlet with and without {@link
 * GuardFilter} in front, interleaved, from one HTTP/1.1 client. Target: at most 5 us added per
 * request. Needs no etcd: runs after it is stopped.
 */
final class GuardFilterOnJetty implements BenchCase {

    @Override
    public void run(Bench bench) throws Exception {
        int warm = bench.quick ? 300 : 2000;
        int n = bench.quick ? 600 : 5000;
        log("5. GuardFilter on Jetty: %d warm-up + %d interleaved requests per variant", warm, n);
        Server server = new Server(new InetSocketAddress("127.0.0.1", 0));
        ServletContextHandler ctx = new ServletContextHandler();
        ctx.setContextPath("/");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/plain/*");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/guarded/*");
        ctx.addFilter(
                new FilterHolder(new GuardFilter(Guard.create())), "/guarded/*", EnumSet.of(DispatcherType.REQUEST));
        server.setHandler(ctx);
        server.start();
        try {
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String base = "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
            HttpRequest[] reqs = {
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/plain/x")), FencingToken.of(7))
                        .GET()
                        .build(),
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/guarded/x")), FencingToken.of(7))
                        .GET()
                        .build(),
            };
            double[][] samples =
                    Interleaved.sampledInTurn(warm, n, () -> send(http, reqs[0]), () -> send(http, reqs[1]));
            double mp = Stats.median(samples[0]);
            double mg = Stats.median(samples[1]);
            bench.report.row("5 guard", "Jetty servlet, no filter", mp, Stats.p99(samples[0]), "ms");
            bench.report.row(
                    "5 guard",
                    "Jetty servlet + GuardFilter",
                    mg,
                    Stats.p99(samples[1]),
                    "ms",
                    "vs_no_filter",
                    mg / mp,
                    "added_us",
                    (mg - mp) * 1000);
            double addedUs = (mg - mp) * 1000;
            bench.report.target(
                    "GuardFilter (ordered admission) over no filter, Jetty",
                    "<= 5 us added per request",
                    String.format(Locale.ROOT, "+%.1f us (%.3f ms vs %.3f ms, medians)", addedUs, mg, mp),
                    addedUs <= 5,
                    addedUs <= 5 ? "" : "the filter parses the header and admits under the guard");
        } finally {
            server.stop();
        }
    }

    /** @return the milliseconds {@code request} took to be answered, which must be 200 */
    private static double send(HttpClient http, HttpRequest request) throws Exception {
        long s = System.nanoTime();
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        long e = System.nanoTime();
        if (r.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + r.statusCode() + ": " + r.body());
        }
        return Stats.ms(e - s);
    }

    /** The servlet measured with and without the filter: answers "ok". */
    static final class OkServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.setContentType("text/plain");
            resp.getWriter().print("ok");
        }
    }
}
