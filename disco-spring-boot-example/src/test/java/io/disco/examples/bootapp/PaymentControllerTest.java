package io.disco.examples.bootapp;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.FencingHttp;
import io.disco.lock.FencedLock;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link PaymentController}'s contract as docs/spring-boot.md states it ("What to catch"), through the real
 * application (Tomcat, the starter's client and guard) on a real etcd: a write whose token went stale while it was
 * in flight is answered 409 with the ledger guard's problem detail, and the {@code LockLostException} that
 * {@code unlock()} then throws is caught, not a 500; a hold lost with no newer write keeps the ledger's 200; a
 * lock held elsewhere for the whole wait is 409 busy; etcd unreachable is 503, past the owner wait and while the
 * client still has its lease.
 *
 * <p>The application's ledger URL leads through {@link LedgerLink}, which holds one write in flight (a pause
 * between the decision and the write, as a GC pause or a slow network makes) while the test ends the hold the way
 * an operator's {@code disco break} does, deleting the holder's key, and, as another instance, takes the lock and
 * writes with a newer token.
 */
@ExtendWith(OutputCaptureExtension.class)
class PaymentControllerTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static LedgerLink link;
    static ConfigurableApplicationContext app;
    static String appUrl;
    static Client admin;
    static Disco otherInstance;

    @BeforeAll
    static void start() throws IOException {
        link = new LedgerLink();
        app = run(
                "--disco.etcd.endpoints=" + String.join(",", ETCD.cluster().endpoints()),
                "--example.ledger-url=" + link.url(),
                "--example.prefix=" + EtcdClaims.uniquePrefix("payment-controller"));
        appUrl = "http://127.0.0.1:" + app.getEnvironment().getRequiredProperty("local.server.port");
        link.forwardTo(appUrl);
        admin = EtcdClaims.client(ETCD.cluster());
        otherInstance = EtcdProvider.disco(admin);
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
        if (otherInstance != null) {
            otherInstance.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (link != null) {
            link.close();
        }
    }

    /** The example application on a free port, its report job quiet (it writes every hour). */
    private static ConfigurableApplicationContext run(String... args) {
        String[] all = new String[args.length + 3];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--server.port=0";
        all[args.length + 1] = "--example.report-every=1h";
        all[args.length + 2] = "--spring.main.banner-mode=off";
        return new SpringApplicationBuilder(ExampleApplication.class).run(all);
    }

    private static CompletableFuture<HttpResponse<String>> pay(String url, String account, long amount) {
        return HTTP.sendAsync(
                HttpRequest.newBuilder(URI.create(url + "/payments/" + account + "?amount=" + amount))
                        .timeout(Duration.ofSeconds(20))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Ends the application's hold of the account's lock as {@code disco break} does: deletes its holder's key. */
    private static void breakTheHold(String account, long token) throws Exception {
        KeyValue holder = EtcdClaims.claims(admin, "/payments/" + account).get(0);
        assertThat(holder.getCreateRevision())
                .as("the holder's key is the one the held write's token came from")
                .isEqualTo(token);
        admin.getKVClient().delete(holder.getKey()).get(5, TimeUnit.SECONDS);
    }

    @Test
    void aWriteThatWentStaleIsAnswered409WithTheGuardsProblemDetailNotA500(CapturedOutput output) throws Exception {
        String account = "stale-" + UUID.randomUUID();
        LedgerLink.Held held = link.holdNextWriteTo(account);
        CompletableFuture<HttpResponse<String>> response = pay(appUrl, account, 10);
        long stale = held.token().get(10, TimeUnit.SECONDS);

        breakTheHold(account, stale);
        // another instance takes the lock and writes first, with a newer token
        FencedLock lock = otherInstance.lock("/payments/" + account);
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        long newer;
        try {
            newer = lock.token().value();
            HttpResponse<String> written = HTTP.send(
                    HttpRequest.newBuilder(URI.create(appUrl + "/ledger/" + account))
                            .header(FencingHttp.HEADER, Long.toString(newer))
                            .PUT(HttpRequest.BodyPublishers.ofString("paid 20"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(written.statusCode()).isEqualTo(200);
        } finally {
            lock.unlock();
        }
        assertThat(newer).isGreaterThan(stale);

        held.release();
        HttpResponse<String> answer = response.get(10, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(409);
        assertThat(answer.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(answer.body()).contains("/problems/stale-token", "\"token\":" + stale, "\"mark\":" + newer);
        // unlock() threw the loss, and the controller caught it
        assertThat(output.getOut()).contains("payment to " + account + ": the lock was lost before its release");
        assertThat(entries(account)).isEqualTo("token " + newer + ": paid 20");
    }

    @Test
    void aHoldLostWithNoNewerWriteKeepsTheLedgers200(CapturedOutput output) throws Exception {
        String account = "lost-" + UUID.randomUUID();
        LedgerLink.Held held = link.holdNextWriteTo(account);
        CompletableFuture<HttpResponse<String>> response = pay(appUrl, account, 5);
        long token = held.token().get(10, TimeUnit.SECONDS);

        breakTheHold(account, token);
        held.release();
        HttpResponse<String> answer = response.get(10, TimeUnit.SECONDS);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("token " + token + ": paid 5");
        assertThat(output.getOut()).contains("payment to " + account + ": the lock was lost before its release");
    }

    @Test
    void aLockHeldElsewhereForTheWholeWaitIs409Busy() throws Exception {
        String account = "busy-" + UUID.randomUUID();
        FencedLock lock = otherInstance.lock("/payments/" + account);
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        try {
            HttpResponse<String> answer = pay(appUrl, account, 1).get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(409);
            assertThat(answer.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(answer.body()).contains("is busy: another request holds its lock");
        } finally {
            lock.unlock();
        }
        assertThat(entries(account)).isEmpty();
    }

    @Test
    void etcdUnreachablePastTheOwnerWaitIs503() throws Exception {
        // never reached: the client has had no lease for longer than the owner wait, BackendUnavailableException
        String nobody;
        try (ServerSocket socket = new ServerSocket(0)) {
            nobody = "http://127.0.0.1:" + socket.getLocalPort();
        }
        try (ConfigurableApplicationContext down = run(
                "--disco.etcd.endpoints=" + nobody,
                "--disco.etcd.request-timeout=300ms",
                "--disco.session.owner-wait=300ms",
                "--example.prefix=" + EtcdClaims.uniquePrefix("payment-controller"))) {
            String url = "http://127.0.0.1:" + down.getEnvironment().getRequiredProperty("local.server.port");
            HttpResponse<String> answer = pay(url, "any", 1).get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
            assertThat(answer.body())
                    .contains("the lock service is unavailable")
                    .doesNotContain(nobody);
        }
    }

    @Test
    void etcdGoneWhileTheClientStillHasItsLeaseIs503() throws Exception {
        try (EtcdCluster own = EtcdCluster.start(1);
                ConfigurableApplicationContext app = run(
                        "--disco.etcd.endpoints=" + String.join(",", own.endpoints()),
                        "--disco.etcd.request-timeout=500ms",
                        "--disco.session.ttl=10s",
                        "--example.prefix=" + EtcdClaims.uniquePrefix("payment-controller"))) {
            String url = "http://127.0.0.1:" + app.getEnvironment().getRequiredProperty("local.server.port");
            own.stopMember(0);
            // the lease is valid for seconds yet: tryLock's claim gets no answer, a DiscoException that is not a loss
            HttpResponse<String> answer = pay(url, "any", 1).get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
            assertThat(answer.body()).contains("the lock service is unavailable");
            assertThat(app.getBean(Disco.class).status().state()).isEqualTo(DiscoStatus.State.UP);
        }
    }

    private static String entries(String account) throws Exception {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create(appUrl + "/entries/" + account))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /**
     * A real HTTP hop between the application and its ledger: it forwards every request, except that the next
     * write to an account the test names is held, once it has arrived, until the test releases it.
     */
    static final class LedgerLink implements AutoCloseable {

        /** A write held in flight. */
        record Held(CompletableFuture<Long> token, CompletableFuture<Void> released) {
            void release() {
                released.complete(null);
            }
        }

        private final HttpServer server;
        private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "ledger-link");
            t.setDaemon(true);
            return t;
        });
        private final Map<String, Held> holds = new ConcurrentHashMap<>();
        private volatile String target;

        LedgerLink() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", this::forward);
            server.setExecutor(threads);
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        void forwardTo(String url) {
            target = url;
        }

        /** The next write to {@code account}: its token once it arrives; sent on once released. */
        Held holdNextWriteTo(String account) {
            Held held = new Held(new CompletableFuture<>(), new CompletableFuture<>());
            holds.put("/ledger/" + account, held);
            return held;
        }

        private void forward(HttpExchange exchange) throws IOException {
            try {
                byte[] body = exchange.getRequestBody().readAllBytes();
                String token = exchange.getRequestHeaders().getFirst(FencingHttp.HEADER);
                Held held = holds.remove(exchange.getRequestURI().getPath());
                if (held != null) {
                    held.token().complete(Long.parseLong(token));
                    held.released().get(30, TimeUnit.SECONDS);
                }
                HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target + exchange.getRequestURI()))
                        .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
                if (token != null) {
                    request.header(FencingHttp.HEADER, token);
                }
                HttpResponse<byte[]> answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
                answer.headers()
                        .firstValue("Content-Type")
                        .ifPresent(t -> exchange.getResponseHeaders().set("Content-Type", t));
                exchange.sendResponseHeaders(
                        answer.statusCode(), answer.body().length == 0 ? -1 : answer.body().length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(answer.body());
                }
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the ledger link could not forward " + exchange.getRequestURI(), e);
            } finally {
                exchange.close();
            }
        }

        @Override
        public void close() {
            server.stop(0);
            threads.shutdownNow();
        }
    }
}
