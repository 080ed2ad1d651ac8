package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.election.ElectionService;
import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.LeadershipRunner;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Elections and leadership runners from the client ({@link Disco#election(String)},
 * {@link Disco#leadershipRunner}; issue 34, item 5): a runner whose client loses its owner (revoked from
 * outside) campaigns again on the new one while another client's runner leads, with tokens strictly increasing
 * across terms; a client's candidate is one per name, finished with its owner; a bounded close through the
 * client keeps the leadership of a task that ignores its signal; closing the client stops its runners. Needs
 * {@link io.disco.client.TestableBackend#endOwnerOf}. Extend it with a {@link #backend()}.
 */
public abstract class ClientElectionContract extends ContractSupport {

    private static LeadershipRunner.Options options(String value, LeaderTask task, LeadershipEvents events) {
        return LeadershipRunner.Options.builder(value, task)
                .listener(events)
                .backoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .build();
    }

    private static final LeaderTask HOLD = term -> term.awaitEnd(Duration.ofMinutes(1));

    @Test
    void aRunnerWhoseOwnerIsRevokedCampaignsAgainOnTheNewOwnerAndTokensIncrease() throws Exception {
        String name = uniqueName("client-runner-heal");
        Disco a = client(10);
        Disco b = client(10);
        LeadershipEvents ea = new LeadershipEvents();
        LeadershipEvents eb = new LeadershipEvents();
        LeadershipRunner ra = a.leadershipRunner(name, options("a", HOLD, ea)); // closed with its client
        Leadership first = ea.elected(10);
        LeadershipRunner rb = b.leadershipRunner(name, options("b", HOLD, eb));
        awaitKeyCount(name, 2);

        backend().endOwnerOf(first.key()); // an operator ends a's lease
        LeadershipEvents.Event lost = ea.revoked(15);
        assertEquals(LeaderTerm.End.LOST, lost.end());
        assertInstanceOf(LeadershipLostException.class, lost.cause());
        Leadership second = eb.elected(15);
        assertTrue(second.token().isNewerThan(first.token()), first.token() + " then " + second.token());

        // a campaigns again, on the client's new owner: a new key behind b's
        Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> {
            List<String> keys = keys(name);
            return keys.size() == 2 && keys.contains(second.key()) && !keys.contains(first.key());
        });
        assertTrue(ra.isRunning());
        assertTrue(rb.relinquish());
        assertEquals(LeaderTerm.End.RELINQUISHED, eb.revoked(10).end());
        Leadership third = ea.elected(10);
        assertNotEquals(first.key(), third.key(), "a new owner, a new key");
        assertTrue(third.token().isNewerThan(second.token()), second.token() + " then " + third.token());
        // b campaigns again after its relinquish: only once its key is behind a's does a's relinquish hand over to
        // it (before that, a campaigning again right after its relinquish would find nobody ahead and lead again)
        awaitKeyCount(name, 2);
        assertTrue(ra.relinquish());
        Leadership fourth = eb.elected(10);
        assertTrue(fourth.token().isNewerThan(third.token()), third.token() + " then " + fourth.token());
    }

    @Test
    void aCandidateIsOnePerClientAndNameAndFinishesWithItsOwner() throws Exception {
        String name = uniqueName("client-election");
        Disco a = client(10);
        Disco b = client(10);
        ElectionService mine = a.election(name);
        Leadership won = mine.campaign("a", Duration.ofSeconds(5));
        assertEquals(won, mine.held().orElseThrow());
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> a.election(name));
        assertTrue(twice.getMessage().contains(name), twice.getMessage());
        assertThrows(IllegalStateException.class, () -> a.lock(name).tryLock(), "one kind per name in use");
        assertThrows(IllegalStateException.class, () -> a.lock(name + "/x").tryLock(), "no nested name in use");
        assertThrows(
                IllegalStateException.class,
                () -> a.leadershipRunner(name, options("a", HOLD, new LeadershipEvents())));
        assertThrows(IllegalArgumentException.class, () -> a.election(name + "/"));
        assertThrows(NullPointerException.class, () -> a.election(null));

        ElectionService theirs = b.election(name);
        CompletableFuture<Leadership> waiting = theirs.campaignAsync("b");
        awaitKeyCount(name, 2);
        backend().endOwnerOf(won.key());
        mine.done().toCompletableFuture().get(15, TimeUnit.SECONDS);
        assertTrue(mine.err().isPresent(), "the candidate of the lost owner is finished, lost");
        Leadership next = waiting.get(15, TimeUnit.SECONDS);
        assertTrue(next.token().isNewerThan(won.token()));

        // a new candidate on the client's new owner, without closing the lost one (it released the name)
        ElectionService again = Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .ignoreExceptions()
                .until(() -> a.election(name), e -> true);
        CompletableFuture<Leadership> behind = again.campaignAsync("a2");
        awaitKeyCount(name, 2);
        assertStillWaiting(behind, "b leads");
        theirs.close();
        Leadership third = behind.get(10, TimeUnit.SECONDS);
        assertTrue(third.token().isNewerThan(next.token()));
        assertNotEquals(won.key(), third.key());
        mine.close(); // a lost candidate's close is harmless
        again.close();
        assertKeys(name);
        a.election(name).close(); // closed: the name is free again
    }

    @Test
    void aBoundedCloseThroughTheClientKeepsTheLeadershipUntilTheTaskReturns() throws Exception {
        String name = uniqueName("client-runner-close");
        Disco a = client(10);
        LeadershipEvents events = new LeadershipEvents();
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean running = new AtomicBoolean();
        LeaderTask stubborn = ignoringItsSignal(release, running, () -> {});
        LeadershipRunner r = a.leadershipRunner(name, options("a", stubborn, events));
        Leadership term = events.elected(10);
        assertFalse(r.close(Duration.ofMillis(200)), "the task has not returned");
        Awaitility.await()
                .during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(3))
                .until(() -> running.get() && keys(name).equals(List.of(term.key())) && r.isRunning());
        release.countDown();
        assertEquals(LeaderTerm.End.CLOSED, events.revoked(10).end());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !r.isRunning());
        assertKeys(name);
        assertTrue(r.close(Duration.ZERO));

        // closing the client stops the runners it started
        LeadershipEvents second = new LeadershipEvents();
        LeadershipRunner s = a.leadershipRunner(name, options("a", HOLD, second));
        second.elected(10);
        a.close();
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !s.isRunning());
        assertKeys(name);
        assertThrows(IllegalStateException.class, () -> a.election(name));
    }
}
