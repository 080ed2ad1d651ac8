package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Waiting on Redis: push-based (a waiter behind a live holder sends nothing but its owner's renewals), a waiter that
 * gives up leaves neither its claim nor its queue entry, and a holder whose owner stopped renewing lets the waiter in
 * once its claim expired, with a higher token. A server of its own, so that its command counts are this test's.
 */
class WaitTest {

    private static RedisServer server;
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> admin;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        client = RedisClient.create();
        admin = client.connect(RedisURI.create(server.uri()));
    }

    @AfterAll
    static void stop() {
        admin.close();
        client.shutdown();
        server.close();
    }

    private static RedisSession session(Duration ttl) {
        return RedisSession.open(
                client,
                RedisURI.create(server.uri()),
                RedisOptions.builder().ttl(ttl).build());
    }

    private static long calls(String command) {
        String stats = admin.sync().info("commandstats");
        for (String line : stats.split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":calls=")) {
                return Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
            }
        }
        return 0;
    }

    @Test
    void aWaiterBehindALiveHolderDoesNotPoll() throws Exception {
        String name = "/wait/no-poll";
        try (RedisSession holder = session(Duration.ofSeconds(30));
                RedisSession waiter = session(Duration.ofSeconds(30))) {
            LockService h = holder.newLock(name);
            Grant held = h.lock();
            LockService w = waiter.newLock(name);
            CompletableFuture<Grant> waiting = w.lockAsync();
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> admin.sync().zcard(RedisKeys.queue(name)) == 2);
            TimeUnit.MILLISECONDS.sleep(200); // its first answer ("wait") is in
            long scripts = calls("evalsha") + calls("eval");
            long all = totalCalls();
            TimeUnit.SECONDS.sleep(2); // what the waiter sends while it waits: nothing (renewals every 10 s)
            long scriptsDuring = calls("evalsha") + calls("eval") - scripts;
            long allDuring = totalCalls() - all - 4; // less this test's own INFO calls
            assertEquals(0, scriptsDuring, "no script ran while the waiter waited");
            assertTrue(allDuring <= 4, "at most a renewal round per owner in 2 s: " + allDuring + " commands");
            assertFalse(waiting.isDone());
            h.unlock();
            Grant g = waiting.get(5, TimeUnit.SECONDS);
            assertTrue(g.token().isNewerThan(held.token()));
        }
    }

    private static long totalCalls() {
        long sum = 0;
        for (String line : admin.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                sum += Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(',')));
            }
        }
        return sum;
    }

    @Test
    void aWaiterThatGivesUpLeavesNoClaimAndNoQueueEntry() throws Exception {
        String name = "/wait/give-up";
        try (RedisSession holder = session(Duration.ofSeconds(30));
                RedisSession waiter = session(Duration.ofSeconds(30))) {
            LockService h = holder.newLock(name);
            h.lock();
            LockService w = waiter.newLock(name);
            try {
                w.lock(Duration.ofMillis(300));
            } catch (TimeoutException expected) {
                // gave up
            }
            CompletableFuture<Grant> cancelled = w.lockAsync();
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> admin.sync().zcard(RedisKeys.queue(name)) == 2);
            cancelled.cancel(true);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> admin.sync().zcard(RedisKeys.queue(name)) == 1);
            assertEquals(1, admin.sync().keys(RedisKeys.prefix(name) + "c:*").size(), "only the holder's claim");
        }
    }

    @Test
    void aHolderWhoseOwnerStoppedLetsTheWaiterInAfterTheTtlWithAHigherToken() throws Exception {
        String name = "/wait/frozen-holder";
        RedisDiscoBackend backend = RedisDiscoBackend.over(
                client,
                RedisURI.create(server.uri()),
                RedisOptions.builder().ttl(Duration.ofSeconds(2)).build());
        try (backend;
                RedisSession holder = backend.open();
                RedisSession waiter = session(Duration.ofSeconds(30))) {
            Grant held = holder.newLock(name).lock();
            LockService w = waiter.newLock(name);
            long frozenAt = System.nanoTime();
            backend.freeze(holder);
            Grant g = w.lock(Duration.ofSeconds(10));
            long waited = System.nanoTime() - frozenAt;
            assertTrue(g.token().isNewerThan(held.token()));
            assertTrue(waited > Duration.ofMillis(1_000).toNanos(), "not before the holder's claim expired");
            holder.done().toCompletableFuture().get(5, TimeUnit.SECONDS);
            assertTrue(holder.err().isPresent(), "the frozen owner declared itself lost by its own clock");
        }
    }
}
