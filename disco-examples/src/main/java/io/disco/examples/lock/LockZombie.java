package io.disco.examples.lock;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.examples.DemoBackend;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The zombie story every lock example tells, with the write to the resource left to the example:
 *
 * <ol>
 *   <li>A takes the lock on a session with a short TTL and writes with its token: accepted.</li>
 *   <li>A freezes: {@link io.disco.client.TestableBackend#freeze} stops its keepalive (on etcd: {@code EtcdSession.orphan()}) without
 *       telling anyone, exactly what a long GC pause or a suspended VM does. Its lease (its ZooKeeper session)
 *       expires after the TTL.</li>
 *   <li>B asks for the same lock; its {@code lock} call returns once A's lease has expired (that call
 *       is the only synchronisation: no sleeping). B's token is higher than A's. B writes: accepted.</li>
 *   <li>A wakes up, still believing it holds the lock, and writes with its old token: the resource
 *       must reject it.</li>
 * </ol>
 */
public final class LockZombie {

    /** The TTL of the zombie's lease: how long B waits for it to expire. */
    public static final Duration DEFAULT_ZOMBIE_TTL = Duration.ofSeconds(2);

    private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(15);

    /** Sends one write to the protected resource on behalf of an owner. */
    @FunctionalInterface
    public interface Writer {
        /**
         * @param owner who writes, {@code A} or {@code B}
         * @param token the fencing token to attach
         * @param data the data to write
         * @return what the resource answered
         * @throws Exception if the write could not be sent or answered
         */
        Answer write(String owner, FencingToken token, String data) throws Exception;
    }

    /**
     * A resource's answer to one write. A writer returns only the two answers the contract allows
     * (applied, or rejected as stale) and throws for anything else, so that an error is never
     * mistaken for a rejection.
     *
     * @param accepted whether the resource applied the write
     * @param code the answer in a word, for example {@code 200}, {@code 409} or {@code ABORTED}
     * @param detail what the resource said
     */
    public record Answer(boolean accepted, String code, String detail) {}

    /**
     * What happened in one run.
     *
     * @param scenario the scenario's name
     * @param tokenA A's fencing token, or null if A never got the lock
     * @param tokenB B's fencing token, or null if B never got the lock
     * @param writeA the answer to A's write while it held the lock, or null
     * @param writeB the answer to B's write, or null
     * @param zombieWrite the answer to A's write after it woke up, or null
     * @param failure the step that failed and why, or null when every step ran
     */
    public record Outcome(
            String scenario,
            FencingToken tokenA,
            FencingToken tokenB,
            Answer writeA,
            Answer writeB,
            Answer zombieWrite,
            String failure) {

        /** @return whether A and B were accepted, the zombie rejected, and B's token is above A's */
        public boolean ok() {
            return failure == null
                    && writeA.accepted()
                    && writeB.accepted()
                    && !zombieWrite.accepted()
                    && tokenB.isNewerThan(tokenA);
        }

        /** @return the verdict of this run */
        public Verdict verdict() {
            if (failure != null) {
                return new Verdict(scenario, false, "step failed: " + failure);
            }
            if (!writeA.accepted()) {
                return new Verdict(scenario, false, "A's legitimate write was refused (" + writeA.code() + ")");
            }
            if (!writeB.accepted()) {
                return new Verdict(scenario, false, "B's legitimate write was refused (" + writeB.code() + ")");
            }
            if (!tokenB.isNewerThan(tokenA)) {
                return new Verdict(scenario, false, "B's token " + tokenB + " is not above A's " + tokenA);
            }
            if (zombieWrite.accepted()) {
                return new Verdict(scenario, false, "ZOMBIE WRITE ACCEPTED (" + zombieWrite.code() + ")");
            }
            return new Verdict(scenario, true, "zombie write rejected (" + zombieWrite.code() + ")");
        }
    }

    private LockZombie() {}

    /**
     * Runs the story on etcd.
     *
     * @param say where the steps are printed
     * @param endpoints etcd client URLs
     * @param lockName the lock's etcd prefix
     * @param zombieTtl the TTL of A's lease
     * @param writer the write to the protected resource
     * @return what happened; never throws for a failed step
     */
    public static Outcome run(Say say, List<String> endpoints, String lockName, Duration zombieTtl, Writer writer) {
        Objects.requireNonNull(writer, "writer");
        DemoBackend backend;
        try {
            backend = DemoBackend.etcd(endpoints);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(
                    say.scenario(), null, null, null, null, null, "connect to etcd " + endpoints + ": interrupted");
        } catch (Exception e) {
            return new Outcome(say.scenario(), null, null, null, null, null, "connect to etcd " + endpoints + ": " + e);
        }
        try (backend) {
            return run(say, backend, lockName, zombieTtl, writer);
        }
    }

    /**
     * Runs the story on {@code demo}.
     *
     * @param say where the steps are printed
     * @param demo where the owners are opened
     * @param lockName the lock's name
     * @param zombieTtl the TTL of A's lease (session)
     * @param writer the write to the protected resource
     * @return what happened; never throws for a failed step
     */
    public static Outcome run(Say say, DemoBackend demo, String lockName, Duration zombieTtl, Writer writer) {
        TestableBackend backend = demo.backend();
        Objects.requireNonNull(writer, "writer");
        String scenario = say.scenario();
        String step = "A: open a session with TTL " + zombieTtl.toSeconds() + " s";
        FencingToken tokenA = null;
        FencingToken tokenB = null;
        Answer writeA = null;
        Answer writeB = null;
        Answer zombie = null;
        say.step("%s, lock: %s", demo.describe(), lockName);
        try (DiscoBackend.Owner ownerA = backend.open(zombieTtl);
                LockService lockA = ownerA.newLock(lockName)) {
            step = "A: acquire the lock";
            Grant a = lockA.lock(ACQUIRE_TIMEOUT);
            tokenA = a.token();
            say.step(
                    "A acquired the lock: key %s, fencing token %s (lease TTL %d s)",
                    a.key(), tokenA, ownerA.ttl().toSeconds());

            step = "A: write";
            writeA = writer.write("A", tokenA, "written by A");
            say.step("A writes with token %s -> %s", tokenA, describe(writeA));
            if (!writeA.accepted()) {
                return new Outcome(
                        scenario,
                        tokenA,
                        null,
                        writeA,
                        null,
                        null,
                        "A's legitimate write was refused (" + writeA.code() + "): the resource has already"
                                + " accepted a higher token (from another etcd cluster, or sent by hand);"
                                + " restart the resource");
            }

            backend.freeze(ownerA);
            say.step("A freezes (think: a long GC pause): %s, and A does not notice", Say.frozen(ownerA));

            step = "B: open a session";
            try (DiscoBackend.Owner ownerB = backend.open();
                    LockService lockB = ownerB.newLock(lockName)) {
                say.step("B asks for the lock: it waits until A's lease has expired");
                step = "B: acquire the lock after A's lease expired";
                Grant b = lockB.lock(zombieTtl.plus(ACQUIRE_TIMEOUT));
                tokenB = b.token();
                say.step("B acquired the lock: key %s, fencing token %s (A's was %s)", b.key(), tokenB, tokenA);

                step = "B: write";
                writeB = writer.write("B", tokenB, "written by B");
                say.step("B writes with token %s -> %s", tokenB, describe(writeB));

                say.step("A wakes up, still believes it holds the lock, and writes with its old token %s", tokenA);
                step = "A (zombie): write";
                zombie = writer.write("A", tokenA, "written by zombie A");
                say.step("zombie A writes with token %s -> %s", tokenA, describe(zombie));

                step = "B: unlock";
                lockB.unlock();
                say.step("B releases the lock");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(scenario, tokenA, tokenB, writeA, writeB, zombie, step + ": interrupted");
        } catch (Exception e) {
            return new Outcome(scenario, tokenA, tokenB, writeA, writeB, zombie, step + ": " + e);
        }
        return new Outcome(scenario, tokenA, tokenB, writeA, writeB, zombie, null);
    }

    private static String describe(Answer answer) {
        return (answer.accepted() ? "ACCEPTED" : "REJECTED") + " (" + answer.code() + ": " + answer.detail() + ")";
    }
}
