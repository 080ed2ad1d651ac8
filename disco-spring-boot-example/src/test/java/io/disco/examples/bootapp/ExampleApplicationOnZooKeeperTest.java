package io.disco.examples.bootapp;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.testservers.ZooKeeperExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application on ZooKeeper, by properties alone: the {@code zookeeper} profile
 * ({@code application-zookeeper.properties}) with the test's in-process server as its connect string. A payment's
 * tokens grow; the ledger's guard takes the newer and rejects the older; the health is the session's.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT, properties = "example.report-every=1h")
@ActiveProfiles("zookeeper")
class ExampleApplicationOnZooKeeperTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    /** A port nothing listens on now, for the application and its ledger (the payments write to it). */
    static final int PORT = freePort();

    @DynamicPropertySource
    static void zooKeeper(DynamicPropertyRegistry properties) {
        properties.add("disco.zookeeper.connect-string", ZK::connectString);
        properties.add("server.port", () -> PORT);
        properties.add("example.ledger-url", () -> "http://127.0.0.1:" + PORT);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Autowired
    Disco disco;

    @LocalServerPort
    int port;

    @Test
    void paymentsAndTheLedgerOnZooKeeper() throws Exception {
        HttpResponse<String> first = send("POST", "/payments/bob?amount=10", null);
        HttpResponse<String> second = send("POST", "/payments/bob?amount=20", null);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
        assertThat(send("GET", "/entries/bob", null).body()).contains("10", "20");

        FencingToken older = holdOnce("/test/example-zookeeper/ledger");
        FencingToken newer = holdOnce("/test/example-zookeeper/ledger");
        assertThat(newer).isGreaterThan(older);
        assertThat(send("PUT", "/ledger/carol", newer).statusCode()).isEqualTo(200);
        HttpResponse<String> stale = send("PUT", "/ledger/carol", older);
        assertThat(stale.statusCode()).isEqualTo(409);
        assertThat(stale.body()).contains("stale-token");

        HttpResponse<String> health = send("GET", "/actuator/health/disco", null);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body())
                .contains(
                        "\"status\":\"UP\"",
                        "\"lease\":\"" + disco.status().owner().orElseThrow() + "\"");
    }

    private FencingToken holdOnce(String name) throws InterruptedException {
        FencedLock lock = disco.lock(name);
        assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
        try {
            return lock.token();
        } finally {
            lock.unlock();
        }
    }

    private HttpResponse<String> send(String method, String path, FencingToken token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.ofString("entry"));
        if (token != null) {
            request.header(FencingHttp.HEADER, token.toString());
        }
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
