package io.disco.examples.election.runner;

import io.disco.client.TestableBackend;
import io.disco.election.LeaderTask;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipListener;
import io.disco.election.LeadershipRunner;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code election/runner}: the second part of the election example, with {@link LeadershipRunner}s
 * instead of a hand-written campaign loop.
 *
 * <ol>
 *   <li>node-a's and node-b's runners campaign; node-a leads and its task writes to the guarded
 *       resource with its term's token until the term ends.</li>
 *   <li>node-a relinquishes (a rolling deploy): its task is signalled and returns, node-b leads with a
 *       higher token, and node-a campaigns again behind it.</li>
 *   <li>A thread of node-a that kept the old term's token writes late: rejected.</li>
 *   <li>An operator deletes node-b's leader key: node-b's task is signalled, node-a leads with a
 *       higher token, and node-b's runner heals on a new session and campaigns again.</li>
 * </ol>
 *
 * <p>Run: {@code java ... io.disco.examples.election.runner.RunnerExample [--endpoints host:port]}
 */
public final class RunnerExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "election/runner";

    private static final long WAIT_SECONDS = 15;

    private RunnerExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), "/disco/examples/election/runner").print());
    }

    /** A term's start or end, as the listener saw it. */
    private record Event(String node, Leadership term, LeaderTerm.End end) {}

    /**
     * Runs the scenario.
     *
     * @param endpoints etcd client URLs
     * @param electionName the election's etcd prefix
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(List<String> endpoints, String electionName) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, electionName),
                failure -> new Verdict(SCENARIO, false, "step failed: " + failure));
    }

    /**
     * Runs the scenario on {@code demo}.
     *
     * @param demo where the runners campaign
     * @param electionName the election's name
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(DemoBackend demo, String electionName) {
        TestableBackend backend = demo.backend();
        Say say = new Say(SCENARIO);
        Guard resource = Guard.create();
        List<String> history = new CopyOnWriteArrayList<>();
        LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
        String step = "start the runners";
        try {
            Duration session = Duration.ofSeconds(5);
            try (LeadershipRunner a = backend.newLeadershipRunner(
                            electionName, options("node-a", resource, history, events, say), session);
                    LeadershipRunner b = backend.newLeadershipRunner(
                            electionName, options("node-b", resource, history, events, say), session)) {
                step = "the first leader";
                Event first = next(events);
                RunnerPair runners = new RunnerPair(a, b);
                say.step(
                        "%s leads with token %s; its task writes",
                        first.node(), first.term().token());
                // the other runner's candidate is queued before the leader steps down (its session may still be
                // opening: on Redis it connects, checks the server and subscribes first), so it is the next leader
                step = "the other runner campaigns";
                awaitCandidates(backend, electionName, 2);
                step = "relinquish";
                runners.of(first.node()).relinquish();
                Event[] handOver = endThenStart(events);
                Event stepped = handOver[0];
                Event second = handOver[1];
                say.step(
                        "%s relinquished (%s); %s leads with token %s",
                        stepped.node(),
                        stepped.end(),
                        second.node(),
                        second.term().token());

                step = "the new leader's first write";
                awaitMark(resource, second.term().token());
                step = "late write with the old token";
                boolean staleRejected;
                try {
                    resource.check(first.term().token());
                    staleRejected = false;
                } catch (TokenStaleException e) {
                    staleRejected = true;
                }
                say.step(
                        "a thread of %s writes late with token %s -> %s",
                        first.node(), first.term().token(), staleRejected ? "REJECTED" : "ACCEPTED");

                step = "delete the leader key";
                backend.deleteKey(second.term().key());
                say.step(
                        "an operator deletes %s's leader key %s",
                        second.node(), second.term().key());
                Event[] heal = endThenStart(events);
                Event lost = heal[0];
                Event third = heal[1];
                say.step(
                        "%s's task is signalled (%s); %s leads with token %s",
                        lost.node(), lost.end(), third.node(), third.term().token());
                step = "the runner that lost heals";
                awaitCandidates(backend, electionName, 2);
                say.step("%s's runner opened a new session and campaigns again behind %s", lost.node(), third.node());

                boolean ordered = second.term().token().isNewerThan(first.term().token())
                        && third.term().token().isNewerThan(second.term().token());
                boolean handedOver = stepped.end() == LeaderTerm.End.RELINQUISHED
                        && lost.end() == LeaderTerm.End.LOST
                        && !second.node().equals(first.node())
                        && !third.node().equals(second.node());
                if (!ordered || !handedOver || !staleRejected || !nonDecreasing(history)) {
                    return new Verdict(
                            SCENARIO,
                            false,
                            "terms out of order or stale write accepted: " + history + " " + first + " " + stepped + " "
                                    + second + " " + lost + " " + third);
                }
                return new Verdict(
                        SCENARIO,
                        true,
                        "tasks ran only while leading, hand-over and heal with rising"
                                + " tokens, stale write rejected");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: " + step + ": interrupted");
        } catch (Exception e) {
            return new Verdict(SCENARIO, false, "step failed: " + step + ": " + e);
        }
    }

    private record RunnerPair(LeadershipRunner a, LeadershipRunner b) {
        LeadershipRunner of(String node) {
            return node.equals("node-a") ? a : b;
        }
    }

    /** Waits (bounded) until the election lists {@code n} candidates. */
    private static void awaitCandidates(TestableBackend backend, String electionName, long n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (backend.keys(electionName).size() != n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not " + n + " candidates within " + WAIT_SECONDS + " s");
            }
            Thread.sleep(10);
        }
    }

    /** Waits (bounded) until the resource has accepted {@code token}. */
    private static void awaitMark(Guard resource, FencingToken token) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (resource.highWater().map(m -> m.compareTo(token) < 0).orElse(true)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the new leader never wrote with token " + token);
            }
            Thread.sleep(10);
        }
    }

    private static boolean nonDecreasing(List<String> history) {
        for (int i = 1; i < history.size(); i++) {
            if (Long.parseLong(history.get(i)) < Long.parseLong(history.get(i - 1))) {
                return false;
            }
        }
        return true;
    }

    /** The next two events, an end and a start, in that order: the listeners of two runners may report them either way round. */
    private static Event[] endThenStart(LinkedBlockingQueue<Event> events) throws InterruptedException {
        Event x = next(events);
        Event y = next(events);
        return x.end() != null ? new Event[] {x, y} : new Event[] {y, x};
    }

    private static Event next(LinkedBlockingQueue<Event> events) throws InterruptedException {
        Event e = events.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (e == null) {
            throw new IllegalStateException("no term started or ended within " + WAIT_SECONDS + " s");
        }
        return e;
    }

    /** A runner whose task writes every 100 ms through the guard until its term ends. */
    private static LeadershipRunner.Options options(
            String node, Guard resource, List<String> history, LinkedBlockingQueue<Event> events, Say say) {
        LeaderTask task = term -> {
            FencingToken token = term.token();
            while (term.isActive()) {
                try {
                    resource.run(token, () -> history.add(Long.toString(token.value())));
                } catch (TokenStaleException e) {
                    say.step("%s's write with token %s was rejected: %s", node, token, e.getMessage());
                    return;
                }
                term.awaitEnd(Duration.ofMillis(100)); // the pace of the leader's writes
            }
        };
        return LeadershipRunner.Options.builder(node, task)
                .listener(new LeadershipListener() {
                    @Override
                    public void elected(Leadership term) {
                        events.add(new Event(node, term, null));
                    }

                    @Override
                    public void revoked(Leadership term, LeaderTerm.End end, Throwable cause) {
                        events.add(new Event(node, term, end));
                    }
                })
                .build();
    }
}
