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
    public String name() {
        return "guard-filter";
    }

    @Override
    public boolean usesEtcd() {
        return false;
    }

    @Override
    public void run(Bench bench) throws Exception {
        boolean quick = bench.quick;
        Report report = bench.report;
        int warm = quick ? 300 : 2000;
        int n = quick ? 600 : 5000;
        log("5. GuardFilter on Jetty: %d warm-up + %d interleaved requests per variant", warm, n);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler ctx = new ServletContextHandler();
        ctx.setContextPath("/");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/plain/*");
        ctx.addServlet(new ServletHolder(new OkServlet()), "/guarded/*");
        ctx.addFilter(new FilterHolder(new GuardFilter(Guard.create())), "/guarded/*", EnumSet.of(DispatcherType.REQUEST));
        server.setHandler(ctx);
        server.start();
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String base = "http://127.0.0.1:" + connector.getLocalPort();
            HttpRequest[] reqs = {
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/plain/x")), FencingToken.of(7)).GET().build(),
                FencingHttp.inject(HttpRequest.newBuilder(URI.create(base + "/guarded/x")), FencingToken.of(7)).GET().build(),
            };
            double[][] samples = new double[2][n];
            for (int i = 0; i < warm + n; i++) {
                for (int j = 0; j < 2; j++) {
                    int v = (i + j) % 2;
                    long s = System.nanoTime();
                    HttpResponse<String> r = http.send(reqs[v], HttpResponse.BodyHandlers.ofString());
                    long e = System.nanoTime();
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("HTTP " + r.statusCode() + ": " + r.body());
                    }
                    if (i >= warm) {
                        samples[v][i - warm] = Stats.ms(e - s);
                    }
                }
            }
            double mp = Stats.median(samples[0]);
            double mg = Stats.median(samples[1]);
            report.row("5 guard", "Jetty servlet, no filter", mp, Stats.p99(samples[0]), "ms");
            report.row("5 guard", "Jetty servlet + GuardFilter", mg, Stats.p99(samples[1]), "ms",
                    "vs_no_filter", mg / mp, "added_us", (mg - mp) * 1000);
            double addedUs = (mg - mp) * 1000;
            report.target("GuardFilter (ordered admission) over no filter, Jetty", "<= 5 us added per request",
                    String.format(Locale.ROOT, "+%.1f us (%.3f ms vs %.3f ms, medians)", addedUs, mg, mp),
                    addedUs <= 5, addedUs <= 5 ? "" : "the filter parses the header and admits under the guard");
        } finally {
            server.stop();
        }
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
