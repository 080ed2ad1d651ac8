package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.contract.LeadershipEvents;
import io.disco.election.ElectionService;
import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LeadershipRunner#start} over a factory of etcd elections: one service per attempt, closed by
 * the runner when the attempt ends; a factory that fails is tried again after the backoff.
 */
class LeadershipRunnerFactoryTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static final LeaderTask HOLD = term -> term.awaitEnd(Duration.ofMinutes(1));

    private static LeadershipRunner.Options options(String value, LeaderTask task, LeadershipEvents events) {
        return LeadershipRunner.Options.builder(value, task)
                .listener(events)
                .backoff(Duration.ofMillis(10), Duration.ofMillis(200))
                .build();
    }

    /** A service's close is visible through leader(), which a closed service refuses. */
    private static boolean closed(ElectionService election) {
        try {
            election.leader();
            return false;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    @Test
    void eachAttemptGetsANewServiceWhichTheRunnerClosesWhenTheAttemptEnds() throws Exception {
        String prefix = Etcd.uniquePrefix("runner-factory");
        List<ElectionService> opened = new CopyOnWriteArrayList<>();
        Supplier<ElectionService> elections = () -> {
            ElectionService e = EtcdProvider.newElection(ETCD.client(), prefix, Etcd.ttl(2));
            opened.add(e);
            return e;
        };
        LeadershipEvents events = new LeadershipEvents();
        LeadershipRunner r = LeadershipRunner.start("factory", elections, options("a", HOLD, events));
        try {
            Leadership first = events.elected(10);
            assertTrue(r.relinquish());
            assertEquals(LeaderTerm.End.RELINQUISHED, events.revoked(10).end());
            Leadership second = events.elected(10);
            assertEquals(1, opened.size(), "a relinquish campaigns again on the same service");
            assertTrue(second.token().isNewerThan(first.token()));

            ETCD.client().getKVClient().delete(Etcd.bytes(second.key())).get(10, TimeUnit.SECONDS);
            assertEquals(LeaderTerm.End.LOST, events.revoked(10).end());
            Leadership third = events.elected(10);
            assertTrue(third.token().isNewerThan(second.token()));
            assertEquals(2, opened.size(), "a loss ends the attempt: a new service");
            assertTrue(closed(opened.get(0)), "the runner closed the lost attempt's service");
            assertTrue(!closed(opened.get(1)), "the current attempt's service is open");
        } finally {
            r.close();
        }
        assertTrue(opened.stream().allMatch(LeadershipRunnerFactoryTest::closed), "close() closed every service");
        assertTrue(Etcd.keysUnder(ETCD.client(), prefix).isEmpty(), "and left no key");
        Etcd.revision(ETCD.client()); // the factory's client is the caller's: still open
    }

    @Test
    void aFactoryThatThrowsOrReturnsNullIsTriedAgainAfterTheBackoff() throws Exception {
        String prefix = Etcd.uniquePrefix("runner-factory-fails");
        AtomicInteger calls = new AtomicInteger();
        List<Long> callNanos = new CopyOnWriteArrayList<>();
        Supplier<ElectionService> elections = () -> {
            callNanos.add(System.nanoTime());
            switch (calls.incrementAndGet()) {
                case 1, 2 -> throw new DiscoException("etcd did not grant a lease in time (test)", null);
                case 3 -> {
                    return null;
                }
                default -> {
                    return EtcdProvider.newElection(ETCD.client(), prefix, Etcd.ttl(2));
                }
            }
        };
        LeadershipEvents events = new LeadershipEvents();
        try (LeadershipRunner r = LeadershipRunner.start("factory-fails", elections, options("a", HOLD, events))) {
            events.elected(10);
            assertEquals(4, calls.get());
            assertTrue(r.isRunning());
            // backoff 10 ms doubling: at least 10, 20 and 40 ms between the calls
            for (int i = 1; i < callNanos.size(); i++) {
                long gap = TimeUnit.NANOSECONDS.toMillis(callNanos.get(i) - callNanos.get(i - 1));
                assertTrue(gap >= 10L << (i - 1), "call " + i + " came " + gap + " ms after the one before");
            }
        }
    }

    @Test
    void closeWhileTheFactoryKeepsFailingReturnsPromptly() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        LeadershipRunner r = LeadershipRunner.start(
                "factory-down",
                () -> {
                    calls.incrementAndGet();
                    throw new DiscoException("down (test)", null);
                },
                LeadershipRunner.Options.builder("a", HOLD)
                        .backoff(Duration.ofSeconds(5), Duration.ofSeconds(5))
                        .build());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> calls.get() >= 1);
        long t0 = System.nanoTime();
        r.close();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 2000, "close waited " + ms + " ms in a 5 s backoff");
        assertTrue(!r.isRunning());
        assertEquals(1, calls.get());
    }

    @Test
    void badArgumentsAreRejectedByName() {
        LeadershipRunner.Options options = LeadershipRunner.Options.of("a", HOLD);
        Supplier<ElectionService> elections = () -> {
            throw new AssertionError("nothing is started");
        };
        assertEquals(
                "name",
                assertThrows(NullPointerException.class, () -> LeadershipRunner.start(null, elections, options))
                        .getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LeadershipRunner.start(" ", elections, options))
                .getMessage()
                .startsWith("name"));
        assertEquals(
                "elections",
                assertThrows(NullPointerException.class, () -> LeadershipRunner.start("n", null, options))
                        .getMessage());
        assertEquals(
                "options",
                assertThrows(NullPointerException.class, () -> LeadershipRunner.start("n", elections, null))
                        .getMessage());
    }
}
