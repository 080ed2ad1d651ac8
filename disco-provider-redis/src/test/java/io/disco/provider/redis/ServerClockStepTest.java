package io.disco.provider.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testservers.FakeClock;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A step of the Redis server's wall clock, with the provider's owners on their own (unstepped) clocks: the server
 * runs under a {@link FakeClock} (libfaketime), each test on a server and a clock of its own. Redis expires keys at
 * absolute wall-clock times; the owners count their validity on their monotonic clocks.
 *
 * <ul>
 *   <li><b>Forward</b>, by more than the TTL: every claim whose TTL is shorter than the step expires on the server at
 *       once, held or waiting. The waiter (a longer TTL, so that its own claim outlives the step) is admitted at its
 *       next check, with a higher token; the holder learns of its loss at its next renewal ({@code PEXPIRE ... XX}
 *       answers 0), within TTL/3; until then it believes it holds. A guard accepts the new holder's token and then
 *       rejects the old one: the fence holds where exclusion did not.</li>
 *   <li><b>Back</b>: keys live longer on the server, by the step. A renewing owner is unaffected (its next renewal
 *       sets the expiry on the server's new clock); the owner's local deadline is unaffected (monotonic); an owner that
 *       stopped renewing declares its loss after the TTL, as always, but its claim stays on the server the step longer,
 *       and the waiter gets in only then.</li>
 * </ul>
 *
 * Both print what they measured: step to waiter admitted, step to the holder's loss declared (forward), freeze to the
 * holder's local loss and to the waiter's admission (back).
 */
class ServerClockStepTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    /** Longer than the forward step: the waiter's claim must outlive it. */
    private static final Duration LONG_TTL = Duration.ofSeconds(30);

    private static final long FORWARD_SECONDS = 10;
    private static final long BACK_SECONDS = 8;
    /** Scheduling on a loaded machine (2 cores shared with other builds). */
    private static final Duration SLACK = Duration.ofMillis(1_500);

    private FakeClock clock;
    private RedisServer server;
    private RedisClient client;
    private StatefulRedisConnection<String, String> admin;
    private RedisDiscoBackend backend;

    @BeforeEach
    void start() {
        FakeClock.requireInstalled();
        clock = new FakeClock();
        server = RedisServer.start(Map.of(), clock);
        client = RedisClient.create();
        admin = client.connect(RedisURI.create(server.uri()));
        backend = RedisDiscoBackend.over(
                client,
                RedisURI.create(server.uri()),
                RedisOptions.builder().ttl(TTL).build());
    }

    @AfterEach
    void stop() {
        backend.close();
        admin.close();
        client.shutdown();
        server.close();
        clock.close();
    }

    private RedisSession session(Duration ttl) {
        return backend.withTtl(ttl).open();
    }

    private RedisCommands<String, String> redis() {
        return admin.sync();
    }

    private List<String> claimKeys(String name) {
        return new ArrayList<>(redis().keys(RedisKeys.prefix(name) + "c:*"));
    }

    /** The one claim key of {@code name} not in {@code known}. */
    private String newClaimKey(String name, List<String> known) {
        List<String> keys = claimKeys(name);
        keys.removeAll(known);
        assertEquals(1, keys.size(), "one new claim: " + keys);
        return keys.get(0);
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    @Test
    @Timeout(60)
    void aForwardStepExpiresTheHoldAtOnceTheHolderLearnsAtItsNextRenewalAndTheGuardFencesIt() throws Exception {
        String name = "/clock/forward";
        Guard guard = Guard.create();
        try (RedisSession holder = session(TTL);
                RedisSession waiter = session(LONG_TTL);
                RedisSession shortWaiter = session(TTL)) {
            LockService h = holder.newLock(name);
            Grant held = h.lock();
            guard.check(held.token());
            String holderKey = newClaimKey(name, List.of());

            LockService w = waiter.newLock(name);
            CompletableFuture<Grant> waiting = w.lockAsync();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> claimKeys(name).size() == 2);
            String waiterKey = newClaimKey(name, List.of(holderKey));
            LockService s = shortWaiter.newLock(name);
            CompletableFuture<Grant> shortWaiting = s.lockAsync();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> redis().zcard(RedisKeys.queue(name)) == 3);
            assertFalse(waiting.isDone());

            AtomicLong admittedAt = new AtomicLong();
            AtomicLong lostAt = new AtomicLong();
            AtomicLong shortLostAt = new AtomicLong();
            waiting.whenComplete((g, e) -> admittedAt.set(System.nanoTime()));
            h.done().whenComplete((v, e) -> lostAt.set(System.nanoTime()));
            shortWaiting.whenComplete((g, e) -> shortLostAt.set(System.nanoTime()));

            long serverBefore = serverMillis();
            long stepped = System.nanoTime();
            clock.step(FORWARD_SECONDS);
            long serverAfter = serverMillis();
            assertTrue(
                    serverAfter - serverBefore >= TimeUnit.SECONDS.toMillis(FORWARD_SECONDS),
                    "the server's TIME moved by the step: " + (serverAfter - serverBefore) + " ms");
            // every claim whose TTL is shorter than the step is gone at once; the long waiter's is left
            assertEquals(List.of(waiterKey), claimKeys(name), "the claims left on the server after the step");

            Grant next = waiting.get(TTL.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            h.done().toCompletableFuture().get(TTL.dividedBy(3).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            ExecutionException shortFailed = assertThrows(
                    ExecutionException.class,
                    () -> shortWaiting.get(TTL.dividedBy(3).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS),
                    "a waiter whose claim expired in the step loses its attempt");

            long admitted = TimeUnit.NANOSECONDS.toMillis(admittedAt.get() - stepped);
            long lost = TimeUnit.NANOSECONDS.toMillis(lostAt.get() - stepped);
            long shortLost = TimeUnit.NANOSECONDS.toMillis(shortLostAt.get() - stepped);
            System.out.printf(
                    "forward step of %d s (TTL %d ms): waiter admitted %d ms after the step, holder's loss declared"
                            + " %d ms after it (it believed it held, with no claim on the server, until then; overlap"
                            + " with the new holder: %d ms), short-TTL waiter's attempt lost %d ms after it%n",
                    FORWARD_SECONDS, TTL.toMillis(), admitted, lost, Math.max(0, lost - admitted), shortLost);

            assertTrue(next.token().isNewerThan(held.token()), next.token() + " after " + held.token());
            assertTrue(admitted <= TTL.plus(SLACK).toMillis(), "admitted at the waiter's next check: " + admitted);
            assertTrue(
                    lost <= TTL.dividedBy(3).plus(SLACK).toMillis(),
                    "the holder's loss at its next renewal: " + lost + " ms");
            assertTrue(h.err().isPresent(), "the holder's lock reports its loss");
            System.out.println("the holder's loss: " + h.err().orElseThrow().getMessage());
            System.out.println("the short-TTL waiter's: " + shortFailed.getCause());
            assertTrue(h.held().isEmpty());
            assertFalse(holder.done().toCompletableFuture().isDone(), "the holder's session lives on: its PING works");

            // the fence: the new holder writes, then the old one, which believed it held until its renewal, is refused
            guard.check(next.token());
            assertThrows(TokenStaleException.class, () -> guard.check(held.token()));
            w.unlock();
        }
    }

    @Test
    @Timeout(60)
    void aBackwardStepKeepsAStoppedHoldersClaimOnTheServerTheStepLongerButNotItsLocalDeadline() throws Exception {
        String name = "/clock/back";
        Guard guard = Guard.create();
        try (RedisSession holder = session(TTL);
                RedisSession waiter = session(TTL)) {
            LockService h = holder.newLock(name);
            Grant held = h.lock();
            guard.check(held.token());
            String holderKey = newClaimKey(name, List.of());
            LockService w = waiter.newLock(name);
            CompletableFuture<Grant> waiting = w.lockAsync();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> claimKeys(name).size() == 2);
            String waiterKey = newClaimKey(name, List.of(holderKey));

            backend.freeze(holder); // renews no more, as a stopped process would
            long frozen = System.nanoTime();
            clock.step(-BACK_SECONDS);
            long pttl = redis().pttl(holderKey);
            System.out.printf(
                    "backward step of %d s (TTL %d ms): the stopped holder's claim has %d ms left on the server%n",
                    BACK_SECONDS, TTL.toMillis(), pttl);
            assertTrue(
                    pttl > TimeUnit.SECONDS.toMillis(BACK_SECONDS)
                            && pttl <= TTL.plusSeconds(BACK_SECONDS).toMillis(),
                    "its expiry is the step further away: " + pttl + " ms");

            // a renewing owner is unaffected: its next renewal sets the expiry on the server's new clock
            Awaitility.await()
                    .atMost(TTL.dividedBy(3).plus(SLACK))
                    .until(() -> redis().pttl(waiterKey) <= TTL.toMillis());

            // the holder's local deadline runs on its monotonic clock: the step does not move it
            h.done().toCompletableFuture().get(TTL.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            long localLoss = millisSince(frozen);
            assertTrue(h.err().isPresent());
            assertTrue(localLoss <= TTL.plus(SLACK).toMillis(), "lost locally within the TTL: " + localLoss + " ms");
            assertEquals(1, redis().exists(holderKey), "its claim is still on the server when it declares its loss");
            assertFalse(waiting.isDone(), "the waiter still waits behind it");

            Grant next = waiting.get(
                    TTL.plusSeconds(BACK_SECONDS).plus(TTL).plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            long admitted = millisSince(frozen);
            System.out.printf(
                    "backward step of %d s: holder stopped renewing, declared its loss %d ms later (local deadline);"
                            + " the waiter was admitted %d ms after the stop (%d ms past the TTL)%n",
                    BACK_SECONDS, localLoss, admitted, admitted - TTL.toMillis());
            assertTrue(
                    admitted > TimeUnit.SECONDS.toMillis(BACK_SECONDS),
                    "admitted only once the server's clock passed the claim's expiry: " + admitted + " ms");
            assertTrue(next.token().isNewerThan(held.token()));
            guard.check(next.token());
            assertThrows(TokenStaleException.class, () -> guard.check(held.token()));
            w.unlock();
        }
    }

    /** @return the server's {@code TIME}, in ms */
    private long serverMillis() {
        List<String> time = redis().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
