package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.redis.RedisSession;
import io.disco.testservers.RedisSentinelSet;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 48 item 3, measured: across a Sentinel failover, a token is never issued twice for a name, and every token
 * granted after the failover is above every token granted before it (by the wall order of the grants), whichever
 * server issued it. Clients grant and release in a loop on two names (two clients per name, each with sessions of its
 * own: {@code replicaAcks} 1, the provider's default under Sentinel, or 0), recording every token with the lineage
 * that issued it (a token's {@code epoch|gen} bits: one server per lineage); mid-stream the primary is killed with
 * SIGKILL (and started again after the promotion) or frozen with SIGSTOP past the failover (and resumed, a stale
 * primary with its clients still connected, their commands queued in its socket buffers); the clients go on for 6 s
 * after. Each test has a deployment of its own (a primary, two replicas, three sentinels: {@link RedisSentinelSet}).
 */
class TokenFailoverTest {

    private static final List<String> NAMES = List.of("/failover/a", "/failover/b");
    private static final int CLIENTS_PER_NAME = 2;
    /** Grants the clients make before the fault, and after the promotion, before the run ends. */
    private static final int GRANTS = 400;

    /** One grant: when the client had it ({@code System.nanoTime()}), the name, the token, the client. */
    record Granted(long nanos, String name, long token, String client) {
        String lineage() {
            return (token >>> 43) + "|" + ((token >>> 32) & 0x7ff);
        }

        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "%s %s token %d (epoch|gen %s, seq %d)",
                    client,
                    name,
                    token,
                    lineage(),
                    token & 0xffffffffL);
        }
    }

    /** Clients granting and releasing on {@link #NAMES} until closed. */
    static final class Stream implements AutoCloseable {
        final List<Granted> grants = Collections.synchronizedList(new ArrayList<>());
        final AtomicLong failures = new AtomicLong();
        final Map<String, Long> failureKinds = new java.util.concurrent.ConcurrentHashMap<>();
        private final RedisClient client = RedisClient.create();
        private final List<Thread> threads = new ArrayList<>();
        private volatile boolean running = true;

        Stream(String sentinelUri, int acks) {
            RedisOptions options = RedisOptions.builder()
                    .ttl(Duration.ofSeconds(2))
                    .replicaAcks(acks)
                    .requestTimeout(Duration.ofSeconds(1))
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            for (String name : NAMES) {
                for (int i = 0; i < CLIENTS_PER_NAME; i++) {
                    String id = name.substring(name.lastIndexOf('/') + 1) + i;
                    Thread t = new Thread(() -> loop(sentinelUri, options, name, id), "grant-" + id);
                    t.setDaemon(true);
                    threads.add(t);
                    t.start();
                }
            }
        }

        private void loop(String uri, RedisOptions options, String name, String id) {
            while (running) {
                try (RedisSession s = RedisSession.open(client, RedisURI.create(uri), options)) {
                    LockService lock = s.newLock(name);
                    while (running && !s.done().toCompletableFuture().isDone()) {
                        Grant g = lock.lock(Duration.ofSeconds(2));
                        grants.add(
                                new Granted(System.nanoTime(), name, g.token().value(), id));
                        lock.unlock();
                    }
                } catch (Exception e) {
                    failures.incrementAndGet();
                    failureKinds.merge(e.getClass().getSimpleName(), 1L, Long::sum);
                    pause();
                }
            }
        }

        /** Waits (at most 60 s) until {@code count} grants were made after {@code sinceNanos}. */
        void awaitGrants(long sinceNanos, int count) {
            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        synchronized (grants) {
                            return grants.stream()
                                            .filter(g -> g.nanos() > sinceNanos)
                                            .count()
                                    >= count;
                        }
                    });
        }

        private static void pause() {
            try {
                Thread.sleep(100); // a failed session: Redis is failing over
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            for (Thread t : threads) {
                t.join(10_000);
            }
            client.shutdown();
        }
    }

    /** What a run found. */
    record Found(List<Granted> duplicates, List<String> inversions, long before, long after, String lineages) {}

    /**
     * @param faultNanos when the fault began; {@code before} counts the grants before it, {@code after} those after
     *     {@code promotedNanos}
     */
    static Found check(List<Granted> all, long faultNanos, long promotedNanos) {
        List<Granted> grants = new ArrayList<>(all);
        grants.sort(java.util.Comparator.comparingLong(Granted::nanos));
        List<Granted> duplicates = new ArrayList<>();
        List<String> inversions = new ArrayList<>();
        for (String name : NAMES) {
            List<Granted> mine =
                    grants.stream().filter(g -> g.name().equals(name)).toList();
            Map<Long, Granted> seen = new HashMap<>();
            Granted highest = null;
            for (Granted g : mine) {
                Granted twice = seen.putIfAbsent(g.token(), g);
                if (twice != null) {
                    duplicates.add(twice);
                    duplicates.add(g);
                }
                if (highest != null && g.token() <= highest.token()) {
                    inversions.add(g + " at +" + ms(g.nanos() - faultNanos) + " ms after " + highest + " at +"
                            + ms(highest.nanos() - faultNanos) + " ms");
                }
                if (highest == null || g.token() > highest.token()) {
                    highest = g;
                }
            }
        }
        Map<String, List<Granted>> byLineage =
                new TreeMap<>(grants.stream().collect(Collectors.groupingBy(Granted::lineage)));
        String lineages = byLineage.entrySet().stream()
                .map(e -> "epoch|gen " + e.getKey() + ": " + e.getValue().size() + " grants, +"
                        + ms(e.getValue().get(0).nanos() - faultNanos) + " to +"
                        + ms(e.getValue().get(e.getValue().size() - 1).nanos() - faultNanos) + " ms")
                .collect(Collectors.joining("; "));
        long before = grants.stream().filter(g -> g.nanos() < faultNanos).count();
        long after = grants.stream().filter(g -> g.nanos() > promotedNanos).count();
        return new Found(duplicates, inversions, before, after, lineages);
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /**
     * Runs the clients until they granted {@value #GRANTS} times, deals the fault to the primary, waits for the
     * promotion and for grants on the promoted primary, heals the old one, and runs until {@value #GRANTS} grants
     * followed the promotion (each wait bounded: a stream that stops granting fails the test).
     */
    private static Found run(int acks, boolean kill) throws Exception {
        try (RedisSentinelSet set = RedisSentinelSet.start()) {
            long fault;
            long promoted;
            Stream stream = new Stream(set.sentinelUri(), acks);
            try {
                stream.awaitGrants(Long.MIN_VALUE, GRANTS);
                RedisServer old = set.primary();
                fault = System.nanoTime();
                if (kill) {
                    old.kill();
                } else {
                    old.freeze();
                }
                try {
                    set.awaitFailover(old, Duration.ofSeconds(30));
                    promoted = System.nanoTime();
                    stream.awaitGrants(promoted, GRANTS / 4); // the old primary stays down while the new one grants
                } finally {
                    if (kill) {
                        old.restart();
                    } else {
                        old.resume();
                    }
                }
                stream.awaitGrants(promoted, GRANTS);
            } finally {
                stream.close();
            }
            Found f = check(stream.grants, fault, promoted);
            System.out.printf(
                    Locale.ROOT,
                    "[token-failover] primary %s, WAIT %d: %d grants before, %d after the promotion (%d ms after the"
                            + " fault); %d failed sessions or calls %s; %d tokens twice, %d not above the one before;"
                            + " %s%n",
                    kill ? "killed" : "frozen",
                    acks,
                    f.before(),
                    f.after(),
                    ms(promoted - fault),
                    stream.failures.get(),
                    stream.failureKinds,
                    f.duplicates().size() / 2,
                    f.inversions().size(),
                    f.lineages());
            f.duplicates().forEach(g -> System.out.println("[token-failover]   twice: " + g));
            f.inversions().forEach(i -> System.out.println("[token-failover]   not above: " + i));
            assertTrue(f.before() > 10 && f.after() > 10, "the clients granted before and after: " + f);
            return f;
        }
    }

    @Test
    void aKilledPrimaryWithOneAck() throws Exception {
        Found f = run(1, true);
        assertEquals(List.of(), f.duplicates(), "no token twice");
        assertEquals(List.of(), f.inversions(), "every token above every one granted before it");
    }

    @Test
    void aFrozenPrimaryResumedWithOneAck() throws Exception {
        Found f = run(1, false);
        assertEquals(List.of(), f.duplicates(), "no token twice");
        assertEquals(List.of(), f.inversions(), "every token above every one granted before it");
    }

    /** Without acknowledgements the epoch alone must keep tokens unique; a stale primary's may then go back. */
    @Test
    void aKilledPrimaryWithoutAcks() throws Exception {
        Found f = run(0, true);
        assertEquals(List.of(), f.duplicates(), "no token twice");
    }

    @Test
    void aFrozenPrimaryResumedWithoutAcks() throws Exception {
        Found f = run(0, false);
        assertEquals(List.of(), f.duplicates(), "no token twice");
    }

    /**
     * The old primary killed and started again while the failover's leader sentinel already reports the master with
     * the new configuration epoch but still at the old primary's address (between its promotion of a replica and
     * its {@code +switch-master}), a client reaching the old primary through the other sentinels; WAIT 0. The
     * provider's epoch read takes the highest {@code config-epoch} of the sentinels that name the server, so the
     * restarted old primary and the promoted replica would both issue in the new epoch, generation 0, from sequence
     * 1.
     */
    @Test
    void theOldPrimaryRestartedInsideTheLeadersSwitch() throws Exception {
        String name = NAMES.get(0);
        try (RedisSentinelSet set = RedisSentinelSet.start()) {
            RedisClient client = RedisClient.create();
            RedisOptions options = RedisOptions.builder()
                    .ttl(Duration.ofSeconds(2))
                    .replicaAcks(0)
                    .requestTimeout(Duration.ofSeconds(1))
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            try {
                List<Long> before = grants(client, set.sentinelUri(), options, name, 5, Duration.ofSeconds(5));
                RedisServer old = set.primary();
                old.kill();
                RedisServer leader = awaitLeaderNaming(set, old, Duration.ofSeconds(20));
                // the replica not promoted, frozen: the leader waits for it (until it is subjectively down, 1 s) before
                // its +switch-master, which holds the window open while the old primary starts again
                RedisServer other = set.servers().stream()
                        .filter(r -> r != old && !"master".equals(r.role()))
                        .findFirst()
                        .orElseThrow();
                other.freeze();
                List<Long> onOld = new ArrayList<>();
                String record;
                try {
                    old.restart();
                    String others = set.sentinelServers().stream()
                            .filter(s -> s != leader)
                            .map(s -> s.address().toString())
                            .collect(Collectors.joining(","));
                    String viaOthers = "redis-sentinel://" + others + "," + leader.address() + "#" + set.masterName();
                    try {
                        onOld = grants(client, viaOthers, options, name, 1, Duration.ofSeconds(2));
                    } catch (Exception e) {
                        System.out.println("[token-failover] no grant on the restarted old primary: " + e);
                    }
                    record = old.command("HGETALL", "disco:{" + name + "}:tok") + " with "
                            + String.valueOf(old.command("INFO", "replication"))
                                    .lines()
                                    .filter(l -> l.startsWith("role:") || l.startsWith("master_replid:"))
                                    .collect(Collectors.joining(" "));
                } finally {
                    other.resume();
                }
                System.out.println("[token-failover] the restarted old primary's record: " + record);
                set.awaitFailover(old, Duration.ofSeconds(30));
                List<Long> after = grants(client, set.sentinelUri(), options, name, 5, Duration.ofSeconds(10));
                System.out.println("[token-failover] restarted inside the switch: before " + before
                        + ", on the restarted old primary " + onOld + ", after " + after);
                for (long t : onOld) {
                    assertTrue(
                            !after.contains(t),
                            "token " + t + " issued by the restarted old primary and again" + " by the promoted one: "
                                    + onOld + " then " + after);
                }
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * A primary promoted again before the sentinels demoted it, so with the replication id it had: found by
     * {@code ./chaos --backend redis} (seed 20261206, the primary isolated, healed, the next primary frozen). The
     * primary A is frozen past a failover to B (epoch 1; the third server has {@code replica-priority 0}, so B and then
     * A are the only candidates), B grants, A is resumed (a master still, its replication id unchanged: the sentinels
     * convert a returning old primary only after it has reported itself a master for 8 s) and B is frozen at once: the
     * sentinels promote A in epoch 2 ({@code REPLICAOF NO ONE} on a master changes nothing). A's token record is its
     * own, epoch 0, with its own replication id: every token A issues now must be above every token B issued.
     */
    @Test
    void aPrimaryPromotedAgainBeforeItsDemotionIssuesAboveTheLineageBetween() throws Exception {
        String name = NAMES.get(0);
        try (RedisSentinelSet set = RedisSentinelSet.start()) {
            RedisClient client = RedisClient.create();
            RedisOptions options = RedisOptions.builder()
                    .ttl(Duration.ofSeconds(2))
                    .requestTimeout(Duration.ofSeconds(1))
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            List<RedisServer> servers = set.servers();
            RedisServer a = servers.get(0);
            RedisServer b = servers.get(1);
            RedisServer c = servers.get(2);
            c.config("replica-priority", "0");
            awaitPriorityKnown(set, c, Duration.ofSeconds(20));
            try {
                List<Long> onA = grants(client, set.sentinelUri(), options, name, 5, Duration.ofSeconds(10));
                a.freeze();
                List<Long> onB;
                try {
                    assertEquals(b, set.awaitFailover(a, Duration.ofSeconds(30)), "B promoted (C has priority 0)");
                    onB = grants(client, set.sentinelUri(), options, name, 5, Duration.ofSeconds(10));
                } finally {
                    a.resume();
                }
                String replid = replid(a);
                b.freeze();
                List<Long> onAAgain;
                String record;
                try {
                    assertEquals(a, set.awaitFailover(b, Duration.ofSeconds(30)), "A promoted again");
                    assertEquals(replid, replid(a), "A kept its replication id: it was never demoted");
                    onAAgain = grants(client, set.sentinelUri(), options, name, 5, Duration.ofSeconds(20));
                    record = String.valueOf(a.command("HGETALL", "disco:{" + name + "}:tok"));
                } finally {
                    b.resume();
                }
                System.out.println("[token-failover] promoted again: on A " + lineages(onA) + ", on B " + lineages(onB)
                        + ", on A again " + lineages(onAAgain) + "; A's record " + record);
                long highestOnB = onB.stream().mapToLong(Long::longValue).max().orElseThrow();
                for (long t : onAAgain) {
                    assertTrue(
                            t > highestOnB,
                            "A, promoted again, issued " + lineages(List.of(t)) + " below B's "
                                    + lineages(List.of(highestOnB)) + ": " + lineages(onAAgain));
                }
            } finally {
                client.shutdown();
            }
        }
    }

    private static String replid(RedisServer server) {
        return String.valueOf(server.command("INFO", "replication"))
                .lines()
                .filter(l -> l.startsWith("master_replid:"))
                .findFirst()
                .orElseThrow()
                .trim();
    }

    private static String lineages(List<Long> tokens) {
        return tokens.stream()
                .map(t -> (t >>> 43) + ":" + ((t >>> 32) & 0x7ff) + ":" + (t & 0xffffffffL))
                .collect(Collectors.joining(" ", "[", "]"));
    }

    /** Waits until every sentinel reports {@code replica}'s {@code slave-priority} as 0 (they read it by INFO). */
    private static void awaitPriorityKnown(RedisSentinelSet set, RedisServer replica, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long knowing = set.sentinelServers().stream()
                    .filter(s -> ((List<?>) s.command("SENTINEL", "REPLICAS", set.masterName()))
                            .stream().map(r -> (List<?>) r).anyMatch(r -> {
                                Map<String, String> f = new HashMap<>();
                                for (int i = 0; i + 1 < r.size(); i += 2) {
                                    f.put(String.valueOf(r.get(i)), String.valueOf(r.get(i + 1)));
                                }
                                return (f.get("ip") + ":" + f.get("port"))
                                                .equals(replica.address().toString())
                                        && "0".equals(f.get("slave-priority"));
                            }))
                    .count();
            if (knowing == set.sentinelServers().size()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the sentinels did not learn the replica's priority 0");
            }
            Thread.sleep(200); // sentinels read a replica's INFO every 10 s
        }
    }

    /** Waits until a sentinel names {@code old} as the master with a config epoch above 0: the failover's leader. */
    private static RedisServer awaitLeaderNaming(RedisSentinelSet set, RedisServer old, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (RedisServer s : set.sentinelServers()) {
                List<?> reply = (List<?>) s.command("SENTINEL", "MASTER", set.masterName());
                Map<String, String> f = new HashMap<>();
                for (int i = 0; i + 1 < reply.size(); i += 2) {
                    f.put(String.valueOf(reply.get(i)), String.valueOf(reply.get(i + 1)));
                }
                if ((f.get("ip") + ":" + f.get("port")).equals(old.address().toString())
                        && Long.parseLong(f.get("config-epoch")) > 0) {
                    System.out.println("[token-failover] the leader " + s.address() + " names the old primary at"
                            + " config epoch " + f.get("config-epoch") + ", flags " + f.get("flags"));
                    return s;
                }
            }
            Thread.sleep(5); // the window lasts until the leader's +switch-master
        }
        throw new IllegalStateException("no sentinel named the old primary with a new epoch");
    }

    private static List<Long> grants(
            RedisClient client, String uri, RedisOptions options, String name, int n, Duration within)
            throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        List<Long> tokens = new ArrayList<>();
        Exception last = null;
        while (tokens.size() < n && System.nanoTime() < deadline) {
            try (RedisSession s = RedisSession.open(client, RedisURI.create(uri), options)) {
                LockService lock = s.newLock(name);
                while (tokens.size() < n) {
                    Grant g = lock.lock(Duration.ofSeconds(2));
                    tokens.add(g.token().value());
                    lock.unlock();
                }
            } catch (Exception e) {
                if (last == null || !String.valueOf(last.getMessage()).equals(e.getMessage())) {
                    System.out.println("[token-failover]   (" + uri.substring(0, uri.indexOf(',')) + ") " + e);
                }
                last = e;
                Thread.sleep(20);
            }
        }
        if (tokens.size() < n) {
            throw new IllegalStateException("granted " + tokens + " of " + n, last);
        }
        return tokens;
    }
}
