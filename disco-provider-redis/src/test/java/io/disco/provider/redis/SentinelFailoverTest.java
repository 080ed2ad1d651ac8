package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.RedisSentinelSet;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel failover (the primary killed): every token issued by the promoted primary is above every token issued
 * before, for the same name. A deployment of its own: the test kills its primary.
 */
class SentinelFailoverTest {

    private static RedisSentinelSet set;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        set = RedisSentinelSet.start();
        client = RedisClient.create();
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        set.close();
    }

    private static List<Long> tokens(String name, int n) throws Exception {
        List<Long> tokens = new ArrayList<>();
        try (RedisSession s = RedisSession.open(
                client,
                RedisURI.create(set.sentinelUri()),
                RedisOptions.builder().ttl(Duration.ofSeconds(5)).build())) {
            LockService lock = s.newLock(name);
            for (int i = 0; i < n; i++) {
                Grant g = lock.lock(Duration.ofSeconds(30));
                tokens.add(g.token().value());
                lock.unlock();
            }
        }
        return tokens;
    }

    @Test
    void tokensAfterAFailoverAreAboveEveryTokenBefore() throws Exception {
        String name = "/failover/lock";
        List<Long> before = tokens(name, 20);
        RedisServer old = set.primary();
        old.kill();
        set.awaitFailover(old, Duration.ofSeconds(30));
        List<Long> after = tokens(name, 20);
        long maxBefore = before.stream().mapToLong(Long::longValue).max().orElseThrow();
        for (long t : after) {
            assertTrue(t > maxBefore, "token " + t + " after the failover is not above " + maxBefore);
        }
        assertTrue((after.get(0) >>> 43) > (before.get(0) >>> 43), "a new epoch: " + before + " then " + after);
        TokenTest.assertStrictlyIncreasing(after);
    }
}
