package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.DiscoException;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The start check: settings that would let tokens go back are refused, naming the setting; the opt-outs work. */
class ServerCheckTest {

    private static RedisServer everysec;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        everysec = RedisServer.start(Map.of("appendfsync", "everysec"));
        client = RedisClient.create();
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        everysec.close();
    }

    private static RedisOptions.Builder options() {
        return RedisOptions.builder().ttl(Duration.ofSeconds(5)).connectTimeout(Duration.ofSeconds(3));
    }

    @Test
    void appendfsyncEverysecIsRefusedNamingTheSetting() {
        UnsafeTokenException e = assertThrows(
                UnsafeTokenException.class,
                () -> RedisSession.open(
                        client, RedisURI.create(everysec.uri()), options().build()));
        assertTrue(e.getMessage().contains("appendfsync always"), e.getMessage());
        assertTrue(e.getMessage().contains("unsafeWithoutDurableTokens"), e.getMessage());
    }

    @Test
    void theOptOutsLetItThrough() {
        RedisSession.open(
                        client,
                        RedisURI.create(everysec.uri()),
                        options().unsafeWithoutDurableTokens().build())
                .close();
        RedisSession.open(
                        client,
                        RedisURI.create(everysec.uri()),
                        options().persistenceCheckedElsewhere().build())
                .close();
    }

    @Test
    void anEvictionPolicyThatCanEvictTheRecordIsRefused() {
        everysec.config("maxmemory-policy", "allkeys-lru");
        try {
            UnsafeTokenException e = assertThrows(
                    UnsafeTokenException.class,
                    () -> RedisSession.open(
                            client,
                            RedisURI.create(everysec.uri()),
                            options().unsafeWithoutDurableTokens().build()));
            assertTrue(e.getMessage().contains("maxmemory-policy noeviction"), e.getMessage());
        } finally {
            everysec.config("maxmemory-policy", "noeviction");
        }
    }

    @Test
    void aServerThatDoesNotAnswerIsATimeoutNotAHang() {
        everysec.freeze();
        try {
            long start = System.nanoTime();
            assertThrows(
                    DiscoException.class,
                    () -> RedisSession.open(
                            client,
                            RedisURI.create(everysec.uri()),
                            options().unsafeWithoutDurableTokens().build()));
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(8).toNanos(), "bounded by the connect timeout");
        } finally {
            everysec.resume();
        }
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsSent() {
        assertThrows(
                IllegalArgumentException.class, () -> RedisOptions.builder().ttl(Duration.ofMillis(10)));
        assertThrows(
                IllegalArgumentException.class, () -> RedisOptions.builder().replicaAcks(-1));
        assertThrows(NullPointerException.class, () -> RedisProvider.disco(client, null, RedisOptions.defaults()));
    }
}
