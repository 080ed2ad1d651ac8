package io.disco.provider.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.barrier.BarrierLostException;
import io.disco.client.Barriers;
import io.disco.testservers.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Redis barriers' own risks, through the backend steps ({@link Barriers}) of sessions on a server of this test's
 * own (it kills connections): a participant whose owner stops renewing while the others wait to leave (no script runs
 * when its key expires: the leavers' timer finds it), a barrier's fall published while the waiter's pub/sub
 * connection is being killed (the resubscription's check finds it, well before the poll), a participant's key
 * deleted behind its back while it enters, and cancelled steps that land with their answers.
 */
class RedisBarrierTest {

    private static final Duration SOON = Duration.ofSeconds(5);

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

    private static <T> T soon(CompletableFuture<T> f) throws Exception {
        return f.get(SOON.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static long participants(String name) {
        return admin.sync().zcard(RedisKeys.participants(name));
    }

    @Test
    void aParticipantWhoseOwnerStopsRenewingCountsAsLeftWithinItsTtl() throws Exception {
        String name = "/barrier-test/expiring";
        try (RedisSession dying = session(Duration.ofSeconds(2));
                RedisSession staying = session(Duration.ofSeconds(30))) {
            Barriers.Participant d = dying.barriers().participant(name, 2);
            Barriers.Participant s = staying.barriers().participant(name, 2);
            CompletableFuture<Void> first = d.enter();
            soon(s.enter());
            soon(first);
            dying.core().liveness().freeze(); // a stopped process: its participant's key expires within 2 s

            long leftAt = System.nanoTime();
            CompletableFuture<Void> leaving = s.leave();
            assertThrows(TimeoutException.class, () -> leaving.get(300, TimeUnit.MILLISECONDS), "one is inside");
            // the staying owner's poll is 5 s: done sooner, the leave's timer (the dying key's PTTL) found it gone
            leaving.get(4, TimeUnit.SECONDS);
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - leftAt) < 4_000);
            await().atMost(SOON).until(() -> participants(name) <= 1); // the expired one is pruned by a script
        }
    }

    @Test
    void aFallPublishedWhileThePubSubConnectionIsKilledIsFoundOnResubscription() throws Exception {
        String name = "/barrier-test/reconnect";
        try (RedisSession raiser = session(Duration.ofSeconds(30));
                RedisSession waiter = session(Duration.ofSeconds(30))) {
            assertTrue(soon(raiser.barriers().raise(name)));
            CompletableFuture<Void> down = waiter.barriers().lowered(name);
            String channel = RedisKeys.channel(name);
            await().atMost(SOON).until(() -> admin.sync().pubsubNumsub(channel).get(channel) == 1L);
            assertFalse(down.isDone());
            long pubsubId = waiter.core().link().pubsub().sync().clientId();

            // kill the waiter's pub/sub connection and lower the barrier in one transaction: the message never
            // reaches it (a client being closed gets no more replies)
            RedisCommands<String, String> tx = admin.sync();
            tx.multi();
            tx.clientKill(io.lettuce.core.KillArgs.Builder.id(pubsubId));
            tx.del(RedisKeys.barrier(name));
            tx.publish(channel, "+b");
            TransactionResult done = tx.exec();
            assertFalse(done.wasDiscarded());
            assertEquals(1L, (Long) done.get(1), "the barrier was lowered");

            long at = System.nanoTime();
            down.get(4, TimeUnit.SECONDS); // Lettuce reconnects and resubscribes; the confirmation's check finds it
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at) < 4_000, "sooner than the 5 s poll");
        }
    }

    @Test
    void aParticipantWhoseKeyIsDeletedWhileEnteringIsTold() throws Exception {
        String name = "/barrier-test/broken";
        try (RedisSession owner = session(Duration.ofSeconds(30))) {
            Barriers.Participant p = owner.barriers().participant(name, 2);
            CompletableFuture<Void> entering = p.enter();
            await().atMost(SOON).until(() -> participants(name) == 1);
            String id = admin.sync().zrange(RedisKeys.participants(name), 0, -1).get(0);
            RedisSession.breakClaims(admin, name, List.of(id), false, false, SOON); // disco break
            ExecutionException lost = assertThrows(ExecutionException.class, () -> soon(entering));
            assertInstanceOf(BarrierLostException.class, lost.getCause());
            assertEquals(0, participants(name));
            soon(p.remove()); // nothing left to remove
        }
    }

    @Test
    void theTestHooksListParticipantsWithTheirOwnerAndNotTheBarrier() throws Exception {
        String name = "/barrier-test/keys";
        try (RedisDiscoBackend hooks = RedisDiscoBackend.over(
                        client,
                        RedisURI.create(server.uri()),
                        RedisOptions.builder().build());
                RedisSession owner = session(Duration.ofSeconds(30))) {
            assertTrue(soon(owner.barriers().raise(name)));
            assertEquals(List.of(), hooks.keys(name), "a barrier belongs to no owner");
            Barriers.Participant p = owner.barriers().participant(name, 2);
            CompletableFuture<Void> entering = p.enter();
            await().atMost(SOON).until(() -> hooks.keys(name).size() == 1);
            String key = hooks.keys(name).get(0);
            assertEquals(owner.id(), hooks.ownerOf(key).orElseThrow());
            entering.cancel(false);
            assertTrue(soon(p.withdraw()));
            assertEquals(List.of(), hooks.keys(name));
            assertTrue(soon(owner.barriers().lower(name)));
        }
    }

    @Test
    void aCancelledEnterThatLandsIsWithdrawnAfterItsAnswer() throws Exception {
        String name = "/barrier-test/cancel";
        try (RedisSession a = session(Duration.ofSeconds(30));
                RedisSession b = session(Duration.ofSeconds(30))) {
            for (int i = 0; i < 20; i++) {
                // alone: the enter is cancelled as it is sent; the withdrawal follows its answer and leaves nothing
                Barriers.Participant alone = a.barriers().participant(name, 2);
                alone.enter().cancel(false);
                assertTrue(soon(alone.withdraw()), "never opened");
                assertEquals(0, participants(name), "the cancelled registration was withdrawn, round " + i);
            }
            for (int i = 0; i < 20; i++) {
                // the second one's enter opens the barrier as it is cancelled: withdraw tells which it was
                Barriers.Participant waiting = a.barriers().participant(name, 2);
                CompletableFuture<Void> first = waiting.enter();
                await().atMost(SOON).until(() -> participants(name) == 1);
                Barriers.Participant late = b.barriers().participant(name, 2);
                late.enter().cancel(false);
                boolean withdrawn = soon(late.withdraw());
                if (withdrawn) {
                    assertEquals(1, participants(name), "withdrawn before it was counted, round " + i);
                    assertThrows(TimeoutException.class, () -> first.get(200, TimeUnit.MILLISECONDS));
                    assertTrue(soon(waiting.withdraw()));
                } else {
                    soon(first); // it opened: the other passed, and the late one is inside
                    assertEquals(2, participants(name));
                    CompletableFuture<Void> out = waiting.leave();
                    soon(late.leave());
                    soon(out);
                }
                assertEquals(0, participants(name), "round " + i);
            }
        }
    }
}
