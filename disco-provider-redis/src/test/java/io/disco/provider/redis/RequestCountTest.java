package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the hot path costs Redis, counted (never timed) with {@code INFO commandstats} deltas on a server of its own:
 * an uncontended lock+unlock is two script calls and nothing else (no subscription: a claim admitted at once needs
 * none), and runs on no worker thread; a waiter's re-check and a release cost the same few commands whether 4 or 64 claims queue behind the holder
 * (the scripts walk the queue from its head only as far as admission needs); a session that waits on a name again
 * soon keeps its subscription.
 */
class RequestCountTest {

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

    /** @return the calls of every command so far, by command, without this test's own {@code INFO}s */
    private static Map<String, Long> stats() {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : admin.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                calls.put(command, Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))));
            }
        }
        return calls;
    }

    /** @return {@code after - before}, per command, the commands that ran at least once */
    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((c, n) -> {
            long diff = n - before.getOrDefault(c, 0L);
            if (diff != 0) {
                d.put(c, diff);
            }
        });
        return d;
    }

    private static long total(Map<String, Long> delta) {
        return delta.values().stream().mapToLong(Long::longValue).sum();
    }

    /** @return the CPU time each worker thread of {@code session} used so far, by thread id */
    private static Map<Long, Long> workersCpu(RedisSession session) {
        String prefix = "disco-redis-worker-" + session.id() + "-";
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<Long, Long> cpu = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                cpu.put(t.getId(), mx.getThreadCpuTime(t.getId()));
            }
        }
        return cpu;
    }

    @Test
    void anUncontendedLockAndUnlockIsTwoScriptCallsAndNoSubscription() throws Exception {
        try (RedisSession session = RedisSession.open(
                client,
                RedisURI.create(server.uri()),
                RedisOptions.builder().ttl(Duration.ofSeconds(30)).build())) {
            LockService lock = session.newLock("/count/uncontended");
            lock.lock(); // the scripts are loaded (EVAL once), the lineage read
            lock.unlock();
            int n = 20;
            Map<Long, Long> workersBefore = workersCpu(session);
            Map<String, Long> before = stats();
            for (int i = 0; i < n; i++) {
                Grant g = lock.lock();
                assertTrue(g.token().value() > 0);
                lock.unlock();
            }
            Map<String, Long> d = delta(before, stats());
            assertEquals(2L * n, d.getOrDefault("evalsha", 0L), "one script to acquire, one to release: " + d);
            assertEquals(0L, d.getOrDefault("eval", 0L), d.toString());
            assertEquals(0L, d.getOrDefault("subscribe", 0L), "no subscription for a claim admitted at once: " + d);
            assertEquals(0L, d.getOrDefault("unsubscribe", 0L), d.toString());
            assertEquals(0L, d.getOrDefault("publish", 0L), "nobody to wake: " + d);
            assertEquals(
                    workersBefore,
                    workersCpu(session),
                    "a claim admitted at once is sent by the caller and committed where its answer arrives: the"
                            + " session's workers ran nothing");
        }
    }

    /**
     * A holder and {@code behind} waiting claims, enqueued with the acquire script on the admin connection (as
     * sessions would, without their threads); then one waiter's re-check and the holder's release, each counted.
     *
     * @return {commands of the last waiter's re-check, commands of the release}
     */
    private static long[] queueOf(String name, int behind) throws Exception {
        String replid = admin.sync()
                .info("replication")
                .lines()
                .filter(l -> l.startsWith("master_replid:"))
                .map(l -> l.substring("master_replid:".length()).trim())
                .findFirst()
                .orElseThrow();
        List<Object> held = acquire(name, "h", "1", replid);
        assertEquals("admitted", String.valueOf(held.get(0)), held.toString());
        for (int i = 0; i < behind; i++) {
            List<Object> w = acquire(name, "w" + i, "1", replid);
            assertEquals("wait", String.valueOf(w.get(0)), w.toString());
        }
        Map<String, Long> before = stats();
        List<Object> again = acquire(name, "w" + (behind - 1), "0", replid);
        Map<String, Long> recheck = delta(before, stats());
        assertEquals("wait", String.valueOf(again.get(0)), again.toString());
        assertTrue(Long.parseLong(String.valueOf(again.get(1))) > 0, "until the holder would expire: " + again);
        assertEquals(behind, Long.parseLong(String.valueOf(again.get(2))), "members ahead: " + again);

        String token = String.valueOf(held.get(1));
        before = stats();
        List<Object> released = Calls.get(
                Scripts.RELEASE.run(admin.async(), name, "h", "owner-h", token), Duration.ofSeconds(5), "", "");
        Map<String, Long> release = delta(before, stats());
        assertEquals("deleted", String.valueOf(released.get(0)), released.toString());
        assertEquals(1L, release.getOrDefault("publish", 0L), "the next claim is woken: " + release);
        return new long[] {total(recheck), total(release)};
    }

    private static List<Object> acquire(String name, String id, String create, String replid) {
        return Calls.get(
                Scripts.ACQUIRE.run(
                        admin.async(),
                        name,
                        id,
                        "owner-" + id,
                        ClaimKind.LOCK.code(),
                        "{}",
                        "",
                        "30000",
                        create,
                        replid,
                        "1",
                        "0"),
                Duration.ofSeconds(5),
                "",
                "");
    }

    @Test
    void aWaitersRecheckAndAReleaseCostTheSameWhateverTheQueuesLength() throws Exception {
        // both scripts loaded first (the first call of each is an EVALSHA answered NOSCRIPT, then an EVAL)
        Calls.get(Scripts.RELEASE.run(admin.async(), "/count/load", "x", "x", "*"), Duration.ofSeconds(5), "", "");
        long[] short4 = queueOf("/count/queue-4", 4);
        long[] long64 = queueOf("/count/queue-64", 64);
        assertEquals(short4[0], long64[0], "a waiter's re-check, 4 vs 64 claims queued");
        assertEquals(short4[1], long64[1], "a release, 4 vs 64 claims queued");
        assertTrue(long64[0] <= 10, "a waiter's re-check: " + long64[0] + " commands");
        assertTrue(long64[1] <= 10, "a release: " + long64[1] + " commands");
    }

    @Test
    void aWaiterWokenByTheReleaseKeepsItsSubscriptionForTheNextWait() throws Exception {
        String name = "/count/hand-off";
        try (RedisSession holder = RedisSession.open(
                        client,
                        RedisURI.create(server.uri()),
                        RedisOptions.builder().ttl(Duration.ofSeconds(30)).build());
                RedisSession waiter = RedisSession.open(
                        client,
                        RedisURI.create(server.uri()),
                        RedisOptions.builder().ttl(Duration.ofSeconds(30)).build())) {
            LockService h = holder.newLock(name);
            LockService w = waiter.newLock(name);
            long subscribed = stats().getOrDefault("subscribe", 0L);
            for (int i = 0; i < 5; i++) {
                Grant held = h.lock();
                CompletableFuture<Grant> waiting = w.lockAsync();
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(5))
                        .until(() -> admin.sync().zcard(RedisKeys.queue(name)) == 2);
                org.awaitility.Awaitility.await() // the waiter listens on the name's channel before the release
                        .atMost(Duration.ofSeconds(5))
                        .until(() -> admin.sync()
                                        .pubsubNumsub(RedisKeys.channel(name))
                                        .getOrDefault(RedisKeys.channel(name), 0L)
                                >= 1);
                h.unlock();
                Grant g = waiting.get(5, TimeUnit.SECONDS);
                assertTrue(g.token().isNewerThan(held.token()));
                w.unlock();
            }
            long subscriptions = stats().getOrDefault("subscribe", 0L) - subscribed;
            assertTrue(
                    subscriptions >= 1 && subscriptions <= 2,
                    "the waiter's session subscribes the name once and keeps it while it waits again soon: "
                            + subscriptions + " subscriptions in 5 hand-offs");
        }
    }
}
