package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** RedisSentinelSet against real redis-server processes: the deployment at start, and a failover after a kill. */
class RedisSentinelSetTest {

    @Test
    void aKilledPrimaryIsReplacedByAReplicaTheSentinelsAgreeOn() {
        try (RedisSentinelSet redis = RedisSentinelSet.start()) {
            assertEquals("mymaster", redis.masterName());
            List<RedisServer> servers = redis.servers();
            assertEquals(3, servers.size());
            assertEquals(3, redis.sentinels().size());
            assertEquals(
                    "redis-sentinel://"
                            + redis.sentinels().stream()
                                    .map(a -> "127.0.0.1:" + a.port())
                                    .collect(Collectors.joining(","))
                            + "#mymaster",
                    redis.sentinelUri());
            RedisServer old = redis.primary();
            assertSame(servers.get(0), old);
            assertEquals("master", old.role());
            assertEquals("slave", servers.get(1).role());
            assertEquals("slave", servers.get(2).role());
            assertEquals("sentinel", redis.sentinelServers().get(0).role());

            old.kill();
            RedisServer promoted = redis.awaitFailover(old, Duration.ofSeconds(15));

            assertNotSame(old, promoted);
            assertTrue(servers.contains(promoted));
            assertEquals("master", promoted.role());
            assertSame(promoted, redis.primary());
        }
    }
}
