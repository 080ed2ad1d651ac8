package io.disco.examples.election.basic;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.FailedStep;
import io.disco.examples.GuardedResource;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code election/basic}: leader election with a fencing token per term, against one {@link Guard}.
 *
 * <ol>
 *   <li>A passive observer (never a candidate) watches who leads.</li>
 *   <li>node-a wins and writes with its term's token; node-b campaigns and waits.</li>
 *   <li>node-a freezes (its session orphaned, short TTL); node-b wins after node-a's lease expired,
 *       with a higher token; the observer sees the failover; node-b writes.</li>
 *   <li>node-a wakes up, still believing it leads, and writes with its old token: rejected.</li>
 * </ol>
 * Each leader takes its token from its own {@code campaign} result, never from a later
 * {@code leader()} call (that would race with the next term).
 *
 * <p>Run: {@code java ... io.disco.examples.election.basic.ElectionExample [--endpoints host:port]}
 */
public final class ElectionExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "election/basic";
    /** The election's etcd prefix. */
    public static final String ELECTION_NAME = "/disco/examples/election/basic";

    private static final Duration WAIT = Duration.ofSeconds(15);

    /**
     * What happened.
     *
     * @param tokenA node-a's term token
     * @param tokenB node-b's term token
     * @param observerSawFailover whether the observer saw node-b lead after node-a
     * @param writesAccepted whether both leaders' writes were accepted
     * @param zombieRejected whether node-a's write after waking up was rejected
     * @param failure the step that failed and why, or null
     */
    public record Outcome(
            FencingToken tokenA,
            FencingToken tokenB,
            boolean observerSawFailover,
            boolean writesAccepted,
            boolean zombieRejected,
            String failure) {

        /** @return the verdict */
        public Verdict verdict() {
            if (failure != null) {
                return new Verdict(SCENARIO, false, "step failed: " + failure);
            }
            if (!writesAccepted) {
                return new Verdict(SCENARIO, false, "a legitimate leader's write was rejected");
            }
            if (!tokenB.isNewerThan(tokenA)) {
                return new Verdict(SCENARIO, false, "node-b's token " + tokenB + " is not above node-a's " + tokenA);
            }
            if (!observerSawFailover) {
                return new Verdict(SCENARIO, false, "the observer did not see the failover");
            }
            if (!zombieRejected) {
                return new Verdict(SCENARIO, false, "STALE LEADER'S WRITE ACCEPTED");
            }
            return new Verdict(
                    SCENARIO, true, "failover seen by the observer, stale leader's write rejected" + " (stale token)");
        }
    }

    private ElectionExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), ELECTION_NAME, Duration.ofSeconds(2))
                .verdict()
                .print());
    }

    /**
     * Runs the scenario.
     *
     * @param endpoints etcd client URLs
     * @param electionName the election's etcd prefix
     * @param zombieTtl the TTL of node-a's lease
     * @return what happened
     */
    public static Outcome run(List<String> endpoints, String electionName, Duration zombieTtl) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, electionName, zombieTtl),
                failure -> new Outcome(null, null, false, false, false, failure));
    }

    /**
     * Runs the scenario on {@code demo}.
     *
     * @param demo where the owners are opened
     * @param electionName the election's name
     * @param zombieTtl the TTL of node-a's lease (session)
     * @return what happened
     */
    public static Outcome run(DemoBackend demo, String electionName, Duration zombieTtl) {
        TestableBackend backend = demo.backend();
        Say say = new Say(SCENARIO);
        Guard resource = Guard.create();
        String step = "open the owners";
        FencingToken a = null;
        FencingToken b = null;
        boolean seen = false;
        boolean writes = false;
        boolean zombieRejected = false;
        CompletableFuture<Leadership> observedB = new CompletableFuture<>();
        say.step("%s, election: %s", demo.describe(), electionName);
        try (DiscoBackend.Owner sObserver = backend.open();
                DiscoBackend.Owner sB = backend.open();
                DiscoBackend.Owner sA = backend.open(zombieTtl);
                ElectionService observer = sObserver.newElection(electionName);
                ElectionService nodeA = sA.newElection(electionName);
                ElectionService nodeB = sB.newElection(electionName);
                Observation watching = observer.observe(l -> {
                    say.step("observer: the leader is now %s (token %s)", l.value(), l.token());
                    if (l.value().equals("node-b")) {
                        observedB.complete(l);
                    }
                })) {

            step = "node-a: campaign";
            Leadership la = nodeA.campaign("node-a", WAIT);
            a = la.token();
            say.step(
                    "node-a is the leader: term token %s (lease TTL %d s)",
                    a, sA.ttl().toSeconds());
            step = "node-a: write";
            boolean okA = GuardedResource.accepts(resource, a);
            say.step("node-a writes with token %s -> %s", a, okA ? "ACCEPTED" : "REJECTED");

            step = "node-b: campaign";
            CompletableFuture<Leadership> campaignB = nodeB.campaignAsync("node-b");
            say.step("node-b campaigns and waits behind node-a");

            backend.freeze(sA);
            say.step("node-a freezes: %s", Say.frozen(sA));
            step = "node-b: win after node-a's lease expired";
            Leadership lb = campaignB.get(zombieTtl.plus(WAIT).toMillis(), TimeUnit.MILLISECONDS);
            b = lb.token();
            say.step("node-b is the leader: term token %s (node-a's was %s)", b, a);
            step = "node-b: write";
            boolean okB = GuardedResource.accepts(resource, b);
            say.step("node-b writes with token %s -> %s", b, okB ? "ACCEPTED" : "REJECTED");
            writes = okA && okB;

            step = "observer: see node-b lead";
            Leadership seenB = observedB.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            seen = seenB.token().equals(b);

            say.step("node-a wakes up, still believes it leads, and writes with its old token %s", a);
            step = "node-a (stale leader): write";
            zombieRejected = !GuardedResource.accepts(resource, a);
            say.step(
                    "stale node-a writes with token %s -> %s",
                    a,
                    zombieRejected
                            ? "REJECTED (stale: the guard's mark is "
                                    + resource.highWater().orElseThrow() + ")"
                            : "ACCEPTED");
            step = "node-b: resign";
            nodeB.resign();
            say.step("node-b resigns");
        } catch (Exception e) {
            return new Outcome(a, b, seen, writes, zombieRejected, FailedStep.describe(step, e));
        }
        return new Outcome(a, b, seen, writes, zombieRejected, null);
    }
}
