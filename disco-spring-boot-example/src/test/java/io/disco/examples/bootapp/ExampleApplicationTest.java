package io.disco.examples.bootapp;

import static org.assertj.core.api.Assertions.assertThat;

import io.disco.client.Disco;
import io.disco.fencing.FencingHttp;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.spring.boot.testing.EtcdServiceConnection;
import io.disco.testservers.EtcdExtension;
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

/**
 * The application against a throwaway etcd, with no bean and no property for it: {@code @EtcdServiceConnection}
 * on the extension's field is the connection. Two holds of one lock, two tokens; the ledger's guard takes the
 * newer and rejects the older.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "example.report-every=1h") // the report job would write to the default ledger URL
class ExampleApplicationTest {

    @RegisterExtension
    @EtcdServiceConnection
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @Autowired
    Disco disco;

    @LocalServerPort
    int port;

    @Test
    void theLedgerTakesTheNewerTokenAndRejectsTheOlder() throws Exception {
        FencingToken older = holdOnce("/test/example-application/ledger");
        FencingToken newer = holdOnce("/test/example-application/ledger");
        assertThat(newer).isGreaterThan(older);
        assertThat(write("alice", newer).statusCode()).isEqualTo(200);
        HttpResponse<String> stale = write("alice", older);
        assertThat(stale.statusCode()).isEqualTo(409);
        assertThat(stale.body()).contains("stale-token");
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

    private HttpResponse<String> write(String account, FencingToken token) throws Exception {
        HttpRequest put = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ledger/" + account))
                .header(FencingHttp.HEADER, token.toString())
                .PUT(HttpRequest.BodyPublishers.ofString("entry"))
                .build();
        return HttpClient.newHttpClient().send(put, HttpResponse.BodyHandlers.ofString());
    }
}
