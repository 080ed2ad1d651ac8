package io.disco.examples.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.Cli;
import io.disco.examples.Http;
import io.disco.examples.Verdict;
import io.disco.examples.lock.http.client.HttpClientExample;
import io.disco.examples.lock.http.client.SlowZombieExample;
import io.disco.examples.lock.http.resource.HttpResource;
import io.disco.fencing.FencingHttp;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class HttpExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final Duration CALL = Duration.ofSeconds(10);

    private final Client client = Cli.etcdClient(ETCD.cluster().endpoints());

    @AfterEach
    void closeClient() {
        client.close();
    }

    @Test
    void theZombieIsAnswered409AndTheLegitimateWritesAreAccepted() throws Exception {
        try (HttpResource resource = HttpResource.start(0, client)) {
            LockZombie.Outcome o = HttpClientExample.run(
                    ETCD.cluster().endpoints(), resource.uri(), "/test/examples/http", Duration.ofSeconds(2));
            assertNull(o.failure());
            assertEquals("200", o.writeA().code());
            assertEquals("200", o.writeB().code());
            assertEquals("409", o.zombieWrite().code());
            assertFalse(o.zombieWrite().accepted());
            assertTrue(o.tokenB().isNewerThan(o.tokenA()), o.tokenA() + " then " + o.tokenB());
            assertEquals(o.tokenB(), resource.guard().highWater().orElseThrow());
            assertEquals(
                    "VERDICT lock/http: zombie write rejected (409) — OK",
                    o.verdict().line());

            HttpClient http = Http.client();
            HttpResponse<String> status = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.uri().resolve("/status"))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            assertEquals(200, status.statusCode());
            assertEquals(
                    "{\"highWater\":" + o.tokenB().value() + ",\"writes\":2,\"data\":\"written by B\"}",
                    status.body().strip());
        }
    }

    @Test
    void aZombiesWriteStillBeingHandledCompletesBeforeTheNewOwnersAndTheNewOwnersDataStands() throws Exception {
        try (HttpResource resource = HttpResource.start(0, client)) {
            Verdict v = SlowZombieExample.run(
                    ETCD.cluster().endpoints(), resource.uri(), "/test/examples/http-slow", Duration.ofSeconds(2));
            assertTrue(v.ok(), v.line());
            assertEquals(
                    "VERDICT lock/http/slow-zombie: in-flight zombie write completed before B's, B's data"
                            + " stands, next zombie write rejected (409) — OK",
                    v.line());
        }
    }

    @Test
    void theExampleServerAnswersMissingAndMalformedHeadersWith400() throws Exception {
        try (HttpResource resource = HttpResource.start(0, client)) {
            Verdict v = HttpResource.selfCheck(resource.uri());
            assertTrue(v.ok(), v.line());
            assertTrue(resource.guard().highWater().isEmpty());

            HttpClient http = Http.client();
            HttpResponse<String> r = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.uri().resolve("/write"))
                            .header(FencingHttp.HEADER, "12abc")
                            .POST(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            assertEquals(400, r.statusCode(), r.body());
            client.getKVClient()
                    .put(
                            ByteSequence.from("/test/examples/http-rev", StandardCharsets.UTF_8),
                            ByteSequence.from("x", StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS);
            long issued = EtcdProvider.currentRevision(client, CALL).value(); // at least 2: a token etcd issued
            r = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.uri().resolve("/write"))
                            .header(FencingHttp.HEADER, Long.toString(issued))
                            .POST(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            assertEquals(200, r.statusCode(), r.body());
            r = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.uri().resolve("/write"))
                            .header(FencingHttp.HEADER, Long.toString(issued - 1))
                            .POST(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            assertEquals(409, r.statusCode(), r.body());
            r = Http.send(
                    http,
                    HttpRequest.newBuilder(resource.uri().resolve("/write"))
                            .header(FencingHttp.HEADER, Long.toString(Long.MAX_VALUE))
                            .POST(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(),
                    CALL);
            assertEquals(400, r.statusCode(), r.body());
            assertTrue(r.body().contains("was not issued"), r.body());
            assertEquals(issued, resource.guard().highWater().orElseThrow().value(), "the mark did not move");
        }
    }
}
