package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.provider.redis.RedisKeys;
import io.disco.provider.redis.RedisSession;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.RedisExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code holders}, {@code list}, {@code break}, {@code leftovers} and {@code watch} with {@code --backend redis}
 * against a real Redis (the throwaway server of disco-test-servers), on claims of this library: the holders and
 * waiters in queue order with their owners, TTLs and tokens; a break after which the broken holder learns that it
 * lost and the next holder holds with a newer token; what is left that should not be; the hand-overs as they happen;
 * and bad input and an unreachable server.
 */
class DiscoRedisTest {

    @RegisterExtension
    static final RedisExtension REDIS = RedisExtension.sharedServer();

    private static final Duration WAIT = Duration.ofSeconds(15);

    private static final CliHarness CLI = CliHarness.on(REDIS);

    private final RedisClaims claims = new RedisClaims(REDIS);

    @AfterEach
    void closeClaims() {
        claims.close();
    }

    private static CliHarness.Run disco(String stdin, String... args) {
        return CLI.disco(stdin, args);
    }

    private static String row(CliHarness.Run r, String key) {
        return r.out()
                .lines()
                .filter(l -> l.contains(" " + key + " "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no row of " + key + " in:\n" + r.out()));
    }

    /** A row's column: 0 role, 1 position, 2 key, 3 lease, 4 TTL, 5 token, 6 name, then the holder's metadata. */
    private static String column(String row, int i) {
        return row.trim().split("\\s+")[i];
    }

    private static long number(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "'" + regex + "' in:\n" + text);
        return Long.parseLong(m.group(1));
    }

    private static String id(String key) {
        return RedisKeys.parseClaim(key).orElseThrow()[1];
    }

    @Test
    void aLockIsListedBrokenAndHandedToItsWaiterWithANewerToken() throws Exception {
        String name = RedisClaims.name("lock");
        RedisSession a = claims.session();
        LockService la = a.newLock(name);
        Grant zombie = la.lock(WAIT);
        RedisSession b = claims.session();
        LockService lb = b.newLock(name);
        CompletableFuture<Grant> next = lb.lockAsync();
        List<Claimant> queue = claims.awaitClaimants(Primitive.LOCK, name, 2, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(
                holders.out().startsWith("lock " + name + ": 1 holding, 1 waiting (kind found from its keys"),
                holders.out());
        String holder = row(holders, zombie.key());
        assertTrue(holder.startsWith("holder"), holder);
        assertEquals(Long.toHexString(a.leaseId()), column(holder, 3), "the lease is the owner: " + holder);
        assertTrue(column(holder, 4).matches("\\d+s"), "the claim key's TTL: " + holder);
        assertEquals(Long.toString(zombie.token().value()), column(holder, 5), holder);
        assertEquals(name, column(holder, 6), holder);
        assertTrue(holder.contains("pid=" + ProcessHandle.current().pid()) && holder.contains("held-since="), holder);
        String waiter = row(holders, queue.get(1).key());
        assertTrue(waiter.startsWith("waiter") && waiter.contains(Long.toHexString(b.leaseId())), waiter);

        CliHarness.Run list = disco("", "list", name);
        assertEquals(0, list.code(), list.err());
        assertTrue(
                list.out()
                        .lines()
                        .anyMatch(l -> l.matches(Pattern.quote(name) + "\\s+lock\\s+1\\s+1\\s+"
                                + zombie.token().value() + "\\s+\\d{4}-.*")),
                list.out());
        CliHarness.Run all = disco("", "list", "/");
        assertTrue(all.out().contains(name + " "), all.out());

        CliHarness.Run declined = disco("n\n", "break", name);
        assertEquals(ExitCode.NOT_BROKEN, declined.code(), declined.err());
        assertTrue(la.err().isEmpty() && claims.admin().exists(RedisKeys.claim(name, id(zombie.key()))) == 1);

        CliHarness.Run broken = disco("y\n", "break", name);
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("broken: deleted " + RedisKeys.claim(name, id(zombie.key()))), broken.out());
        assertTrue(
                broken.out()
                        .contains("the broken holder's token was "
                                + zombie.token().value()),
                broken.out());
        long mark = number(broken.out(), "raise the guard's mark to (\\d+)");
        assertEquals(zombie.token().value() + 1, mark);
        la.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertInstanceOf(LockLostException.class, la.err().orElseThrow(), "the broken holder learns it lost");

        Grant successor = next.get(WAIT.toSeconds(), SECONDS);
        assertTrue(successor.token().isNewerThan(zombie.token()), successor.token() + " after " + zombie.token());
        Guard guard = Guard.withInitialToken(mark);
        guard.check(successor.token());
        assertThrows(TokenStaleException.class, () -> guard.check(zombie.token()));
        assertTrue(claims.admin().exists(RedisKeys.tokens(name)) == 1, "the token record stays");

        lb.unlock();
        await().atMost(WAIT).until(() -> claims.listing(Primitive.LOCK, name).isEmpty());
        CliHarness.Run nobody = disco("", "holders", name);
        assertEquals(ExitCode.NOTHING_HELD, nobody.code(), nobody.out());
        CliHarness.Run nothing = disco("", "break", name, "--primitive", "lock", "--yes");
        assertEquals(ExitCode.NOTHING_HELD, nothing.code(), nothing.out());
    }

    @Test
    void aReadPhaseIsBrokenWholeAndTheWriterAndTheNextReaderHoldAboveIt() throws Exception {
        String name = RedisClaims.name("rw");
        RWLockService r1 = claims.session().newRWLock(name);
        RWGrant reader = r1.rLock(WAIT);
        RWGrant reader2 = claims.session().newRWLock(name).rLock(WAIT);
        assertEquals(reader.token(), reader2.token(), "readers of one phase share its token");
        RWLockService wl = claims.session().newRWLock(name);
        CompletableFuture<RWGrant> writer = wl.lockAsync();
        claims.awaitClaimants(Primitive.RWLOCK, name, 3, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("rwlock " + name + ": 2 holding, 1 waiting"), holders.out());
        assertTrue(row(holders, reader.key()).startsWith("holder:read"), holders.out());
        assertTrue(holders.out().contains("waiter:write"), holders.out());

        CliHarness.Run named = disco("", "break", name, "--holder", reader.key(), "--yes");
        assertEquals(ExitCode.USAGE, named.code(), "readers are broken together: " + named.err());

        CliHarness.Run broken = disco("", "break", name, "--yes");
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("the read phase (2 readers, one shared token)"), broken.out());
        assertTrue(
                broken.out().contains("the read phase's token (field phase of " + RedisKeys.tokens(name)),
                broken.out());
        r1.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        RWGrant w = writer.get(WAIT.toSeconds(), SECONDS);
        assertTrue(w.token().isNewerThan(reader.token()), w.token() + " after " + reader.token());
        wl.unlock();
        RWGrant again = claims.session().newRWLock(name).rLock(WAIT);
        assertTrue(again.token().isNewerThan(w.token()), "a new phase, a new token");
        assertEquals(0, disco("", "leftovers", name).code());
    }

    @Test
    void aPermitIsBrokenByItsKeyAndItsSlotGoesToTheWaiter() throws Exception {
        String name = RedisClaims.name("semaphore");
        SemaphoreService s1 = claims.session().newSemaphore(name, 2);
        Permit p1 = s1.acquire(WAIT);
        Permit p2 = claims.session().newSemaphore(name, 2).acquire(WAIT);
        CompletableFuture<Permit> p3 = claims.session().newSemaphore(name, 2).acquireAsync();
        claims.awaitClaimants(Primitive.SEMAPHORE, name, 3, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("semaphore " + name + ": 2 holding, 1 waiting"), holders.out());

        CliHarness.Run which = disco("", "break", name, "--yes");
        assertEquals(ExitCode.USAGE, which.code(), which.err());
        assertTrue(which.err().contains("--holder"), which.err());

        // the claim's Redis key names it as well as its listed key
        CliHarness.Run broken = disco("", "break", name, "--holder", RedisKeys.claim(name, id(p1.key())), "--yes");
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("(and frees its slot)"), broken.out());
        s1.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        Permit third = p3.get(WAIT.toSeconds(), SECONDS);
        assertTrue(third.token().isNewerThan(p1.token()) && third.token().isNewerThan(p2.token()));
        assertEquals(0, disco("", "leftovers", name).code());
    }

    @Test
    void anElectionsLeaderIsBrokenAndTheCandidateLeads() throws Exception {
        String name = RedisClaims.name("election");
        ElectionService ea = claims.session().newElection(name);
        Leadership leader = ea.campaign("leader-a");
        CompletableFuture<Leadership> next = claims.session().newElection(name).campaignAsync("candidate-b");
        claims.awaitClaimants(Primitive.ELECTION, name, 2, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("election " + name + ": 1 holding, 1 waiting"), holders.out());
        assertTrue(row(holders, leader.key()).startsWith("leader"), holders.out());
        assertTrue(holders.out().contains("value=candidate-b"), holders.out());

        CliHarness.Run broken = disco("", "break", name, "--yes");
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("the next leader's token will exceed it"), broken.out());
        Leadership b = next.get(WAIT.toSeconds(), SECONDS);
        assertTrue(b.token().isNewerThan(leader.token()));
    }

    @Test
    void leftoversAreWhatNothingRemovesAndDeletingThemUnblocksTheName() throws Exception {
        String base = RedisClaims.name("leftovers");
        var admin = claims.admin();
        // a queue entry whose claim is gone
        String deadQueue = base + "/queue";
        admin.zadd(RedisKeys.queue(deadQueue), 1, "00000000deadbeef");
        // a semaphore slot held by a claim that is gone
        String deadSlot = base + "/slot";
        admin.hset(RedisKeys.slots(deadSlot), "0", "00000000feedf00d");
        // a claim outside its queue
        String unqueued = base + "/unqueued";
        admin.hset(
                RedisKeys.claim(unqueued, "0123456789abcdef"),
                java.util.Map.of("owner", "7", "kind", "x", "token", "0"));
        admin.pexpire(RedisKeys.claim(unqueued, "0123456789abcdef"), 60_000);
        // a holder's claim that lost its TTL after its owner stopped (frozen: it cleans nothing up): nothing expires
        // it, and it blocks the waiter for ever
        String stuck = base + "/stuck";
        var frozen = claims.backend().open();
        Grant held = frozen.newLock(stuck).lock(WAIT);
        CompletableFuture<Grant> waiter = claims.session().newLock(stuck).lockAsync();
        claims.awaitClaimants(Primitive.LOCK, stuck, 2, WAIT);
        claims.backend().freeze(frozen);
        admin.persist(RedisKeys.claim(stuck, id(held.key())));
        // the frozen owner declares itself lost by its own clock once its TTL (2 s) ran out since its last renewal: by
        // then the server has expired whatever of it had a TTL
        frozen.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertThrows(TimeoutException.class, () -> waiter.get(1, SECONDS), "a claim without a TTL blocks the name");
        CliHarness.Run ttl = disco("", "holders", stuck);
        assertEquals("none", column(row(ttl, held.key()), 4), ttl.out());

        CliHarness.Run found = disco("", "leftovers", base);
        assertEquals(0, found.code(), found.err());
        assertTrue(found.out().contains("queue-entry") && found.out().contains("00000000deadbeef"), found.out());
        assertTrue(found.out().contains("semaphore-slot"), found.out());
        assertTrue(found.out().contains("claim-unqueued"), found.out());
        assertTrue(found.out().contains("claim-no-ttl") && found.out().contains(id(held.key())), found.out());
        assertTrue(found.out().contains("4 leftovers; --delete deletes them"), found.out());

        CliHarness.Run deleted = disco("", "leftovers", base, "--delete");
        assertEquals(0, deleted.code(), deleted.err());
        assertTrue(deleted.out().contains("deleted 4 of 4 leftovers"), deleted.out());
        Grant next = waiter.get(WAIT.toSeconds(), SECONDS);
        assertTrue(next.token().isNewerThan(held.token()));
        assertTrue(disco("", "leftovers", base).out().contains("no leftovers under " + base));
        assertEquals(1, admin.exists(RedisKeys.tokens(stuck)), "the token record is never a leftover");
    }

    @Test
    void watchTellsAcquiredQueuedBrokenReleasedAndExpired() throws Exception {
        String name = RedisClaims.name("watch");
        RedisSession a = claims.session();
        Grant first = a.newLock(name).lock(WAIT);
        try (CliHarness.Watching watch = CLI.new Watching("watch", name)) {
            await().atMost(WAIT).until(() -> watch.printed("watching lock " + name + " (1 holding"));
            assertTrue(watch.printed("holding", first.key()), watch.text());
            RedisSession b = claims.session();
            LockService lb = b.newLock(name);
            CompletableFuture<Grant> second = lb.lockAsync();
            await().atMost(WAIT).until(() -> watch.printed("queued", "waiter"));
            assertEquals(0, disco("", "break", name, "--yes").code());
            Grant g = second.get(WAIT.toSeconds(), SECONDS);
            await().atMost(WAIT).until(() -> watch.printed("broken", first.key()));
            await().atMost(WAIT)
                    .until(() -> watch.printed(
                            "acquired", g.key(), "token=" + g.token().value()));
            lb.unlock();
            await().atMost(WAIT).until(() -> watch.printed("released", g.key()));

            var frozen = claims.backend().open();
            Grant f = frozen.newLock(name).lock(WAIT);
            await().atMost(WAIT).until(() -> watch.printed("acquired", f.key()));
            claims.backend().freeze(frozen);
            await().atMost(WAIT).until(() -> watch.printed("expired", f.key()));
        }
    }

    @Test
    void badInputAndAnUnreachableServerAreOneLine() throws Exception {
        String name = RedisClaims.name("input");
        for (String[] args : List.of(
                new String[] {"holders", name, "--backend", "redis", "--endpoints", "127.0.0.1:2379"},
                new String[] {"holders", name, "--backend", "redis", "--connect", "127.0.0.1:2181"},
                new String[] {"holders", name, "--redis-uri", "redis://127.0.0.1:6379"},
                new String[] {"holders", name, "--backend", "redis", "--redis-uri", "http://127.0.0.1:6379"},
                new String[] {"holders", name, "--backend", "redis", "--redis-uri", "127.0.0.1:6379"},
                new String[] {"holders", "locks", "--backend", "redis", "--redis-uri", REDIS.uri()},
                new String[] {"holders", name + "/", "--backend", "redis", "--redis-uri", REDIS.uri()})) {
            CliHarness.Run r = disco("", args);
            assertEquals(ExitCode.USAGE, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().lines().count(), "one line: " + r.err());
        }
        CliHarness.Run nobody = disco("", "holders", name);
        assertEquals(ExitCode.NOTHING_HELD, nobody.code(), nobody.err());
        assertTrue(nobody.err().contains("redis-cli --scan --pattern"), nobody.err());

        CliHarness.Run refused =
                disco("", "holders", name, "--backend", "redis", "--redis-uri", "redis://127.0.0.1:1", "--timeout=1s");
        assertEquals(ExitCode.UNREACHABLE, refused.code(), refused.err());
        assertTrue(refused.err().contains("connection refused"), refused.err());
        assertEquals(1, refused.err().lines().count(), refused.err());

        long start = System.nanoTime();
        CliHarness.Run tls = disco(
                "",
                "holders",
                name,
                "--backend",
                "redis",
                "--redis-uri",
                REDIS.uri().replace("redis://", "rediss://"),
                "--timeout=2s");
        assertEquals(ExitCode.UNREACHABLE, tls.code(), tls.err());
        assertTrue(tls.err().contains("it does not speak TLS"), "says that TLS failed: " + tls.err());
        assertTrue(tls.err().contains("a plaintext server takes redis://"), tls.err());
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toSeconds() < 10, "within the timeout");
    }

    @Test
    void theTokenRecordIsNeverListedAsANameInUse() {
        String name = RedisClaims.name("record-only");
        claims.admin().hset(RedisKeys.tokens(name), "epoch", "1");
        CliHarness.Run list = disco("", "list", name);
        assertEquals(ExitCode.NOTHING_HELD, list.code(), list.out());
        FencingToken.of(1); // the token record is a name's history, not a claim
    }
}
