package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipRunner;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The runner interrupts its task before the term's {@code ended()} completes, so that every
 * interruptible wait of the task ends with {@link InterruptedException} (issue 36, item 2): terms
 * ended from outside (the leader key deleted, the lease revoked, through a client of their own), by
 * {@code relinquish()} and by {@code close()}, with the task blocked in {@code awaitEnd}, in
 * {@code Thread.sleep} and in {@code BlockingQueue.take}.
 */
class RunnerInterruptTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    /** Where the task blocks while its term lasts. */
    enum Wait {
        AWAIT_END,
        SLEEP,
        TAKE
    }

    /** A term's task started: its leadership and where it will block. */
    record Started(Leadership term, Wait blockedIn, boolean interruptedAtStart) {}

    /** How a term's wait ended, and what the term said at that moment. */
    record Outcome(long token, Wait blockedIn, String how, String endAtThatMoment) {}

    /** Blocks in {@code wait} until interrupted (sleep and awaitEnd: at most 30 s); says how the wait ended. */
    private static String block(LeaderTerm term, Wait wait) {
        try {
            switch (wait) {
                case AWAIT_END -> {
                    boolean ended = term.awaitEnd(Duration.ofSeconds(30));
                    return "awaitEnd returned " + ended + " with the interrupt flag "
                            + Thread.currentThread().isInterrupted();
                }
                case SLEEP -> {
                    Thread.sleep(30_000);
                    return "sleep returned";
                }
                case TAKE -> {
                    return "take returned " + new LinkedBlockingQueue<String>().take();
                }
                default -> throw new AssertionError(wait);
            }
        } catch (InterruptedException e) {
            return "interrupted";
        }
    }

    /** A task that reports its start, blocks in the wait its turn names, and reports how the wait ended. */
    private static LeaderTask blockingTask(
            BlockingQueue<Started> started, BlockingQueue<Outcome> outcomes, List<String> order) {
        AtomicInteger turn = new AtomicInteger();
        return term -> {
            boolean interruptedAtStart = Thread.currentThread().isInterrupted();
            Wait wait = Wait.values()[turn.getAndIncrement() % Wait.values().length];
            order.add("start " + term.token().value());
            started.add(new Started(term.leadership(), wait, interruptedAtStart));
            String how = block(term, wait);
            String end = term.end().map(Enum::name).orElse("active");
            order.add("end " + term.token().value());
            outcomes.add(new Outcome(term.token().value(), wait, how, end));
        };
    }

    private static LeadershipRunner runner(String prefix, LeaderTask task) {
        return EtcdProvider.newLeadershipRunner(
                ETCD.client(),
                prefix,
                LeadershipRunner.Options.builder("a", task)
                        .backoff(Duration.ofMillis(1), Duration.ofMillis(100))
                        .build(),
                Etcd.ttl(1));
    }

    @Test
    void aHundredTermsEndedFromOutsideEachInterruptTheTaskBeforeTheNextTermStarts() throws Exception {
        String prefix = Etcd.uniquePrefix("runner-interrupt");
        BlockingQueue<Started> started = new LinkedBlockingQueue<>();
        BlockingQueue<Outcome> outcomes = new LinkedBlockingQueue<>();
        List<String> order = new CopyOnWriteArrayList<>();
        List<String> wrong = new ArrayList<>();
        int terms = 100;
        long t0 = System.nanoTime();
        try (Client outside = Etcd.client(ETCD.cluster());
                LeadershipRunner r = runner(prefix, blockingTask(started, outcomes, order))) {
            for (int i = 0; i < terms; i++) {
                Started s = started.poll(15, TimeUnit.SECONDS);
                assertNotNull(s, "term " + i + " did not start");
                boolean revoke = i % 2 == 1; // with three waits in turn, every pair (end, wait) occurs
                if (revoke) {
                    List<KeyValue> kvs = outside.getKVClient()
                            .get(Etcd.bytes(s.term().key()))
                            .get(10, TimeUnit.SECONDS)
                            .getKvs();
                    assertEquals(1, kvs.size(), "the leader key of term " + i);
                    outside.getLeaseClient().revoke(kvs.get(0).getLease()).get(10, TimeUnit.SECONDS);
                } else {
                    outside.getKVClient().delete(Etcd.bytes(s.term().key())).get(10, TimeUnit.SECONDS);
                }
                Outcome o = outcomes.poll(15, TimeUnit.SECONDS);
                assertNotNull(o, "the task of term " + i + " (" + s.blockedIn() + ") did not return");
                String ended = (revoke ? "lease revoked" : "key deleted") + ", blocked in " + o.blockedIn();
                if (!o.how().equals("interrupted") || !o.endAtThatMoment().equals("LOST") || s.interruptedAtStart()) {
                    wrong.add("term " + i + " (" + ended + "): " + o.how() + ", end then " + o.endAtThatMoment()
                            + (s.interruptedAtStart() ? ", and the task started interrupted" : ""));
                }
            }
        }
        System.out.println("runner interrupt: " + terms + " terms in "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
        assertEquals(List.of(), wrong, wrong.size() + " of " + terms + " terms did not end with InterruptedException");
        long last = 0;
        for (int i = 0; i + 1 < order.size(); i += 2) {
            long token = Long.parseLong(order.get(i).substring("start ".length()));
            assertEquals("start " + token, order.get(i));
            assertEquals(
                    "end " + token,
                    order.get(i + 1),
                    "the term of token " + token + " ended before the next started: " + order);
            assertTrue(token > last, "tokens rise: " + order);
            last = token;
        }
    }

    @Test
    void relinquishAndCloseInterruptTheTaskBeforeTheEndCompletes() throws Exception {
        String prefix = Etcd.uniquePrefix("runner-interrupt-own");
        BlockingQueue<Started> started = new LinkedBlockingQueue<>();
        BlockingQueue<Outcome> outcomes = new LinkedBlockingQueue<>();
        List<String> order = new CopyOnWriteArrayList<>();
        List<String> wrong = new ArrayList<>();
        LeadershipRunner r = runner(prefix, blockingTask(started, outcomes, order));
        try {
            for (int i = 0; i < 6; i++) {
                Started s = started.poll(15, TimeUnit.SECONDS);
                assertNotNull(s, "term " + i + " did not start");
                boolean close = i == 5;
                if (close) {
                    r.close();
                } else {
                    assertTrue(r.relinquish(), "term " + i + " leads");
                }
                Outcome o = outcomes.poll(15, TimeUnit.SECONDS);
                assertNotNull(o, "the task of term " + i + " did not return");
                String expected = close ? "CLOSED" : "RELINQUISHED";
                if (!o.how().equals("interrupted") || !o.endAtThatMoment().equals(expected) || s.interruptedAtStart()) {
                    wrong.add("term " + i + " (" + expected + ", blocked in " + o.blockedIn() + "): " + o.how()
                            + ", end then " + o.endAtThatMoment());
                }
            }
        } finally {
            r.close();
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void aTaskThatSwallowsTheInterruptHoldsItsTermUntilItReturnsAndTheNextTaskStartsClear() throws Exception {
        String prefix = Etcd.uniquePrefix("runner-interrupt-swallow");
        BlockingQueue<Leadership> started = new LinkedBlockingQueue<>();
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        BlockingQueue<String> release = new LinkedBlockingQueue<>();
        AtomicInteger turn = new AtomicInteger();
        LeaderTask swallowing = term -> {
            seen.add("start " + turn.get() + " interrupted "
                    + Thread.currentThread().isInterrupted());
            started.add(term.leadership());
            if (turn.getAndIncrement() > 0) {
                return;
            }
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException swallowed) {
                seen.add("swallowed, end " + term.end().orElseThrow());
            }
            // the end is complete once the interrupt has been sent: this wait returns at once
            seen.add("awaitEnd " + term.awaitEnd(Duration.ofSeconds(10)) + " "
                    + term.end().orElseThrow());
            release.take(); // still holds the runner: the next term waits for this task
            seen.add("returned");
        };
        try (Client outside = Etcd.client(ETCD.cluster());
                LeadershipRunner r = runner(prefix, swallowing)) {
            Leadership first = started.poll(15, TimeUnit.SECONDS);
            assertNotNull(first);
            assertEquals("start 0 interrupted false", seen.poll(5, TimeUnit.SECONDS));
            outside.getKVClient().delete(Etcd.bytes(first.key())).get(10, TimeUnit.SECONDS);
            assertEquals("swallowed, end LOST", seen.poll(15, TimeUnit.SECONDS));
            assertEquals("awaitEnd true LOST", seen.poll(15, TimeUnit.SECONDS));
            assertEquals(null, started.poll(500, TimeUnit.MILLISECONDS), "no term starts while the task runs");
            release.add("go");
            assertEquals("returned", seen.poll(5, TimeUnit.SECONDS));
            Leadership second = started.poll(15, TimeUnit.SECONDS);
            assertNotNull(second);
            assertTrue(second.token().isNewerThan(first.token()));
            assertEquals("start 1 interrupted false", seen.poll(5, TimeUnit.SECONDS));
        }
    }
}
