package io.disco.examples.rwlock.basic;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.FailedStep;
import io.disco.examples.GuardedResource;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code rwlock/basic}: one {@link Guard} protects a resource that readers and writers both reach
 * with their tokens.
 *
 * <ol>
 *   <li>Readers R1 and R2 hold the read lock at the same time, with the same token; both reads are
 *       accepted.</li>
 *   <li>Writer W1 cannot take the write lock while they read ({@code tryLock} is empty); it asks,
 *       and gets it once both readers released, with a token above theirs. W1 writes.</li>
 *   <li>W1 freezes (its session orphaned, short TTL). W2 gets the write lock after W1's lease
 *       expired, with a higher token, and writes.</li>
 *   <li>W1 wakes up and writes with its old token: the guard rejects it.</li>
 * </ol>
 *
 * <p>Run: {@code java ... io.disco.examples.rwlock.basic.RWLockExample [--endpoints host:port]}
 */
public final class RWLockExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "rwlock/basic";
    /** The read/write lock's etcd prefix. */
    public static final String LOCK_NAME = "/disco/examples/rwlock/basic";

    private static final Duration WAIT = Duration.ofSeconds(15);

    /**
     * What happened.
     *
     * @param readToken1 R1's token
     * @param readToken2 R2's token
     * @param readsAccepted whether both reads were accepted
     * @param writerBlockedByReaders whether W1's {@code tryLock} was refused while the readers held
     * @param tokenW1 W1's token
     * @param tokenW2 W2's token
     * @param writesAccepted whether W1's and W2's writes were accepted
     * @param zombieRejected whether W1's write after waking up was rejected
     * @param failure the step that failed and why, or null
     */
    public record Outcome(
            FencingToken readToken1,
            FencingToken readToken2,
            boolean readsAccepted,
            boolean writerBlockedByReaders,
            FencingToken tokenW1,
            FencingToken tokenW2,
            boolean writesAccepted,
            boolean zombieRejected,
            String failure) {

        /** @return the verdict */
        public Verdict verdict() {
            if (failure != null) {
                return new Verdict(SCENARIO, false, "step failed: " + failure);
            }
            if (!readToken1.equals(readToken2)) {
                return new Verdict(
                        SCENARIO,
                        false,
                        "concurrent readers got different tokens " + readToken1 + " and " + readToken2);
            }
            if (!readsAccepted || !writesAccepted) {
                return new Verdict(SCENARIO, false, "a legitimate read or write was rejected");
            }
            if (!writerBlockedByReaders) {
                return new Verdict(SCENARIO, false, "the writer got the lock while readers held it");
            }
            if (!tokenW1.isNewerThan(readToken1) || !tokenW2.isNewerThan(tokenW1)) {
                return new Verdict(
                        SCENARIO,
                        false,
                        "tokens out of order: readers " + readToken1 + ", W1 " + tokenW1 + ", W2 " + tokenW2);
            }
            if (!zombieRejected) {
                return new Verdict(SCENARIO, false, "ZOMBIE WRITER ACCEPTED");
            }
            return new Verdict(
                    SCENARIO,
                    true,
                    "readers shared token " + readToken1.value()
                            + ", writer waited for them, zombie writer rejected (stale token)");
        }
    }

    private RWLockExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(
                run(cli.endpoints(), LOCK_NAME, Duration.ofSeconds(2)).verdict().print());
    }

    /**
     * Runs the scenario.
     *
     * @param endpoints etcd client URLs
     * @param lockName the read/write lock's etcd prefix
     * @param zombieTtl the TTL of W1's lease
     * @return what happened
     */
    public static Outcome run(List<String> endpoints, String lockName, Duration zombieTtl) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, lockName, zombieTtl),
                failure -> new Outcome(null, null, false, false, null, null, false, false, failure));
    }

    /**
     * Runs the scenario on {@code demo}.
     *
     * @param demo where the owners are opened
     * @param lockName the read/write lock's name
     * @param zombieTtl the TTL of W1's lease (session)
     * @return what happened
     */
    public static Outcome run(DemoBackend demo, String lockName, Duration zombieTtl) {
        TestableBackend backend = demo.backend();
        Say say = new Say(SCENARIO);
        Guard resource = Guard.create();
        String step = "open the owners";
        FencingToken r1 = null;
        FencingToken r2 = null;
        FencingToken w1 = null;
        FencingToken w2 = null;
        boolean reads = false;
        boolean blocked = false;
        boolean writes = false;
        boolean zombieRejected = false;
        say.step(
                "%s, read/write lock: %s; the resource is guarded by one Guard for reads and writes",
                demo.describe(), lockName);
        try (DiscoBackend.Owner sR1 = backend.open();
                DiscoBackend.Owner sR2 = backend.open();
                DiscoBackend.Owner sW1 = backend.open(zombieTtl);
                DiscoBackend.Owner sW2 = backend.open();
                RWLockService reader1 = sR1.newRWLock(lockName);
                RWLockService reader2 = sR2.newRWLock(lockName);
                RWLockService writer1 = sW1.newRWLock(lockName);
                RWLockService writer2 = sW2.newRWLock(lockName)) {

            step = "R1: read lock";
            RWGrant g1 = reader1.rLock(WAIT);
            r1 = g1.token();
            step = "R2: read lock while R1 holds it";
            Optional<RWGrant> g2 = reader2.tryRLock();
            if (g2.isEmpty()) {
                throw new IllegalStateException("R2 could not read while R1 was reading");
            }
            r2 = g2.get().token();
            say.step("R1 and R2 hold the read lock at the same time: tokens %s and %s", r1, r2);
            step = "R1, R2: read";
            reads = GuardedResource.accepts(resource, r1) & GuardedResource.accepts(resource, r2);
            say.step("R1 and R2 read with their tokens -> %s", reads ? "ACCEPTED" : "REJECTED");

            step = "W1: try the write lock while readers hold it";
            Optional<RWGrant> early = writer1.tryLock();
            blocked = early.isEmpty();
            say.step(
                    "W1 tries the write lock while they read -> %s",
                    blocked ? "refused (readers hold it)" : "GRANTED (wrong!)");
            if (!blocked) {
                throw new IllegalStateException("W1 got the write lock while readers held it");
            }
            step = "W1: wait for the write lock";
            CompletableFuture<RWGrant> pending = writer1.lockAsync();
            say.step("W1 asks for the write lock and waits; R1 and R2 release");
            reader1.rUnlock();
            reader2.rUnlock();
            RWGrant gw1 = pending.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            w1 = gw1.token();
            say.step("W1 holds the write lock: token %s (readers had %s)", w1, r1);
            step = "W1: write";
            boolean okW1 = GuardedResource.accepts(resource, w1);
            say.step("W1 writes with token %s -> %s", w1, okW1 ? "ACCEPTED" : "REJECTED");

            backend.freeze(sW1);
            say.step("W1 freezes: %s", Say.frozen(sW1));
            step = "W2: write lock after W1's lease expired";
            say.step("W2 asks for the write lock: it waits until W1's lease has expired");
            RWGrant gw2 = writer2.lock(zombieTtl.plus(WAIT));
            w2 = gw2.token();
            say.step("W2 holds the write lock: token %s (W1's was %s)", w2, w1);
            step = "W2: write";
            boolean okW2 = GuardedResource.accepts(resource, w2);
            say.step("W2 writes with token %s -> %s", w2, okW2 ? "ACCEPTED" : "REJECTED");
            writes = okW1 && okW2;

            say.step("W1 wakes up, still believes it is the writer, and writes with its old token %s", w1);
            step = "W1 (zombie): write";
            zombieRejected = !GuardedResource.accepts(resource, w1);
            say.step(
                    "zombie W1 writes with token %s -> %s",
                    w1,
                    zombieRejected
                            ? "REJECTED (stale: the guard's mark is "
                                    + resource.highWater().orElseThrow() + ")"
                            : "ACCEPTED");
            step = "W2: unlock";
            writer2.unlock();
            say.step("W2 releases the write lock");
        } catch (Exception e) {
            return new Outcome(r1, r2, reads, blocked, w1, w2, writes, zombieRejected, FailedStep.describe(step, e));
        }
        return new Outcome(r1, r2, reads, blocked, w1, w2, writes, zombieRejected, null);
    }
}
