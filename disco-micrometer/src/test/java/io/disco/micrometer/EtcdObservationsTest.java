package io.disco.micrometer;

import io.disco.client.TestableBackend;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The observations of a client on a real etcd. */
class EtcdObservationsTest extends ObservationsTests {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static Client client;
    private static TestableBackend backend;

    /** Connects once its first answer comes (up to 30 s: a new client's first request may be slow on a loaded machine). */
    @BeforeAll
    static void connect() {
        client = Client.builder()
                .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
        Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            client.getKVClient()
                    .get(ByteSequence.from("/test/observations/warm-up", StandardCharsets.UTF_8))
                    .get(5, TimeUnit.SECONDS);
            return true;
        });
        backend = EtcdProvider.testableBackend(
                client,
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(10))
                        .requestTimeout(Duration.ofSeconds(5))
                        .build());
    }

    @AfterAll
    static void disconnect() {
        if (backend != null) {
            backend.close();
        }
        if (client != null) {
            client.close();
        }
    }

    @Override
    TestableBackend backend() {
        return backend;
    }
}
