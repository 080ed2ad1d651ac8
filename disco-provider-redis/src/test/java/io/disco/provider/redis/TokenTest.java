package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
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
 * Tokens on a standalone Redis: strictly increasing per name whatever primitive takes them, and above every token
 * issued before a restart of the server from its AOF (the record's generation goes up by one). A server of its own:
 * the test kills it.
 */
class TokenTest {

    private static RedisServer server;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        client = RedisClient.create();
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        server.close();
    }

    private static RedisSession session() {
        return RedisSession.open(
                client,
                RedisURI.create(server.uri()),
                RedisOptions.builder().ttl(Duration.ofSeconds(5)).build());
    }

    /** Every primitive on one name draws from the name's one record: each token is above the one before. */
    static List<Long> tokensOfEveryPrimitive(RedisSession s, String name) throws Exception {
        List<Long> tokens = new ArrayList<>();
        LockService lock = s.newLock(name);
        tokens.add(lock.lock().token().value());
        lock.unlock();
        lock.close();
        RWLockService rw = s.newRWLock(name);
        tokens.add(rw.lock().token().value());
        rw.unlock();
        tokens.add(rw.rLock().token().value());
        rw.rUnlock();
        rw.close();
        SemaphoreService sem = s.newSemaphore(name, 1);
        tokens.add(sem.acquire().token().value());
        sem.release();
        sem.close();
        ElectionService e = s.newElection(name);
        tokens.add(e.campaign("v").token().value());
        e.resign();
        e.close();
        return tokens;
    }

    static void assertStrictlyIncreasing(List<Long> tokens) {
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "token " + i + " of " + tokens);
        }
    }

    @Test
    void tokensIncreasePerNameAcrossEveryPrimitive() throws Exception {
        try (RedisSession s = session()) {
            List<Long> tokens = tokensOfEveryPrimitive(s, "/token/primitives");
            tokens.addAll(tokensOfEveryPrimitive(s, "/token/primitives"));
            assertStrictlyIncreasing(tokens);
            assertTrue(tokens.get(0) > 0);
        }
    }

    @Test
    void aRestartFromTheAofContinuesAboveEveryTokenIssuedBefore() throws Exception {
        String name = "/token/restart";
        List<Long> before;
        try (RedisSession s = session()) {
            before = tokensOfEveryPrimitive(s, name);
        }
        long genBefore = (before.get(before.size() - 1) >>> 32) & 0x7FF;
        server.kill(); // SIGKILL: only what the AOF (appendfsync always) holds survives
        server.restart();
        List<Long> after;
        try (RedisSession s = session()) {
            after = tokensOfEveryPrimitive(s, name);
        }
        List<Long> all = new ArrayList<>(before);
        all.addAll(after);
        assertStrictlyIncreasing(all);
        assertEquals(genBefore + 1, (after.get(0) >>> 32) & 0x7FF, "a new generation: " + all);
        assertEquals(1, after.get(0) & 0xFFFFFFFFL, "the sequence starts again in the new generation: " + all);
    }
}
