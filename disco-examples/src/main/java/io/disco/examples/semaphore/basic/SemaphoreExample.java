package io.disco.examples.semaphore.basic;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.KeyedGuard;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.List;

/**
 * {@code semaphore/basic}: three workers share two permits of one semaphore; the resource guards per
 * slot ({@link KeyedGuard} keyed by {@link Permit#guardKey()}).
 *
 * <ol>
 *   <li>w1 and w2 get the two permits, on slots 0 and 1, and both write: both accepted, although
 *       their tokens differ (one mark over both would reject the lower).</li>
 *   <li>w3 asks and waits. w1 freezes past its lease; w3 gets w1's slot with a higher token and
 *       writes.</li>
 *   <li>w1 wakes up and writes with its old permit: rejected on its slot. w2, still a valid
 *       holder, writes again: accepted.</li>
 * </ol>
 *
 * <p>Run: {@code java ... io.disco.examples.semaphore.basic.SemaphoreExample [--endpoints host:port]}
 */
public final class SemaphoreExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "semaphore/basic";

    private static final Duration WAIT = Duration.ofSeconds(15);

    private SemaphoreExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), "/disco/examples/semaphore/basic", Duration.ofSeconds(2))
                .print());
    }

    /**
     * Runs the scenario.
     *
     * @param endpoints etcd client URLs
     * @param name the semaphore's etcd prefix
     * @param zombieTtl the TTL of w1's lease
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(List<String> endpoints, String name, Duration zombieTtl) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, name, zombieTtl),
                failure -> new Verdict(SCENARIO, false, "step failed: " + failure));
    }

    /**
     * Runs the scenario on {@code demo}.
     *
     * @param demo where the owners are opened
     * @param name the semaphore's name
     * @param zombieTtl the TTL of w1's lease (session)
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(DemoBackend demo, String name, Duration zombieTtl) {
        TestableBackend backend = demo.backend();
        Say say = new Say(SCENARIO);
        KeyedGuard resource = KeyedGuard.create();
        String step = "open the owners";
        try {
            try (DiscoBackend.Owner s1 = backend.open(zombieTtl);
                    DiscoBackend.Owner s2 = backend.open();
                    DiscoBackend.Owner s3 = backend.open();
                    SemaphoreService w1 = s1.newSemaphore(name, 2);
                    SemaphoreService w2 = s2.newSemaphore(name, 2);
                    SemaphoreService w3 = s3.newSemaphore(name, 2)) {
                step = "w1 and w2 acquire";
                Permit p1 = w1.acquire(WAIT);
                Permit p2 = w2.acquire(WAIT);
                boolean both = write(resource, p1, say, "w1") & write(resource, p2, say, "w2");
                step = "w3 waits; w1 freezes";
                say.step("both permits are taken (%s): w3 asks and waits", w3.stat());
                backend.freeze(s1);
                say.step("w1 freezes: %s", Say.frozen(s1));
                Permit p3 = w3.acquire(zombieTtl.plus(WAIT));
                say.step(
                        "w3 holds slot %d with token %s (w1 held slot %d with token %s)",
                        p3.slot(), p3.token(), p1.slot(), p1.token());
                boolean w3ok = write(resource, p3, say, "w3");
                step = "w1 wakes up";
                boolean zombieAccepted = write(resource, p1, say, "w1 (zombie)");
                boolean w2again = write(resource, p2, say, "w2");
                w2.release();
                w3.release();
                if (!both || !w3ok || !w2again) {
                    return new Verdict(SCENARIO, false, "a valid holder's write was rejected");
                }
                if (p3.slot() != p1.slot() || !p3.token().isNewerThan(p1.token())) {
                    return new Verdict(
                            SCENARIO, false, "w3 did not get w1's slot with a higher token: " + p1 + " " + p3);
                }
                if (zombieAccepted) {
                    return new Verdict(SCENARIO, false, "ZOMBIE WRITE ACCEPTED on slot " + p1.slot());
                }
                return new Verdict(
                        SCENARIO,
                        true,
                        "two holders wrote side by side, the frozen worker's write was"
                                + " rejected on its reassigned slot");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Verdict(SCENARIO, false, "step failed: " + step + ": interrupted");
        } catch (Exception e) {
            return new Verdict(SCENARIO, false, "step failed: " + step + ": " + e);
        }
    }

    private static boolean write(KeyedGuard resource, Permit p, Say say, String who) {
        try {
            resource.forKey(p.guardKey()).check(p.token());
            say.step("%s writes on slot %d with token %s -> ACCEPTED", who, p.slot(), p.token());
            return true;
        } catch (TokenStaleException e) {
            say.step("%s writes on slot %d with token %s -> REJECTED (%s)", who, p.slot(), p.token(), e.getMessage());
            return false;
        }
    }
}
