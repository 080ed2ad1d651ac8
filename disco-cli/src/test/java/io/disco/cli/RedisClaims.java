package io.disco.cli;

import static org.awaitility.Awaitility.await;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.redis.RedisDiscoBackend;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.redis.RedisSession;
import io.disco.testservers.RedisExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What the Redis tests of the tool claim with and read: this library's sessions on one Lettuce client, and an admin
 * connection for the test's own reads and writes, on the server of a test class's {@link RedisExtension};
 * {@link #close} closes them all, the newest first.
 */
final class RedisClaims implements AutoCloseable {

    private final RedisExtension redis;
    private final RedisClient client = RedisClient.create();
    private final List<AutoCloseable> open = new ArrayList<>();
    private StatefulRedisConnection<String, String> admin;
    private RedisDiscoBackend backend;

    RedisClaims(RedisExtension redis) {
        this.redis = redis;
    }

    static String name(String what) {
        return "/test/cli-redis/" + what + "/" + UUID.randomUUID();
    }

    RedisURI uri() {
        return RedisURI.create(redis.uri());
    }

    /** A session of this library (TTL 20 s) with its own connections. */
    RedisSession session() {
        return session(Duration.ofSeconds(20));
    }

    RedisSession session(Duration ttl) {
        RedisSession s = RedisSession.open(
                client,
                uri(),
                RedisOptions.builder().ttl(ttl).clientId("cli-test").build());
        open.add(s);
        return s;
    }

    /** The test backend (its {@code freeze} stops an owner's renewals). */
    RedisDiscoBackend backend() {
        if (backend == null) {
            backend = RedisDiscoBackend.over(
                    client,
                    uri(),
                    RedisOptions.builder().ttl(Duration.ofSeconds(2)).build());
            open.add(backend);
        }
        return backend;
    }

    /** The test's own commands. */
    RedisCommands<String, String> admin() {
        if (admin == null) {
            admin = client.connect(uri());
        }
        return admin.sync();
    }

    /** Waits until {@code name} has {@code count} claimants, holders and waiters; returns them. */
    List<Claimant> awaitClaimants(Primitive kind, String name, int count, Duration wait) {
        await().atMost(wait).until(() -> listing(kind, name).size() == count);
        return listing(kind, name);
    }

    List<Claimant> listing(Primitive kind, String name) {
        if (admin == null) {
            admin();
        }
        return RedisSession.claimants(admin, kind, name, Duration.ofSeconds(5));
    }

    @Override
    public void close() {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                // closing: the others still
            }
        }
        if (admin != null) {
            admin.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(5));
    }
}
