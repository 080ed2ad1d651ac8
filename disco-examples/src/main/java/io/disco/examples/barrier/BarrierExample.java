package io.disco.examples.barrier;

import io.disco.barrier.Barrier;
import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.examples.Cli;
import io.disco.examples.DemoBackend;
import io.disco.examples.EtcdScenario;
import io.disco.examples.FailedStep;
import io.disco.examples.Say;
import io.disco.examples.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code barrier/basic}: a migrator and three workers, each a client of its own ({@link Disco}, as separate processes
 * would have), meet at a {@link Barrier} and then at a {@link DoubleBarrier}.
 *
 * <ol>
 *   <li>The migrator raises the barrier {@code <ns>/migration}; the three workers {@code await()} it. For
 *       {@value #QUIET_MILLIS} ms of "migration" none of them may start; then the migrator lowers it and all three
 *       start, each after the moment the migrator called {@code release()}.</li>
 *   <li>The workers enter the double barrier {@code <ns>/batch} for three, one after the other: w1 and w2 wait (none
 *       passes within {@value #QUIET_MILLIS} ms), w3 enters and all three pass, none before w3 called
 *       {@code enter()}.</li>
 *   <li>w1 and w2 leave and wait (none returns within {@value #QUIET_MILLIS} ms); w3 leaves and all three return,
 *       none before w3 called {@code leave()}.</li>
 * </ol>
 * The order is judged on this process's monotonic clock ({@link System#nanoTime()}): the moment before a call and
 * the moment another call returned. Every wait is bounded ({@value #WAIT_SECONDS} s). On a backend without barriers
 * the scenario fails with the step that could not run (its exception), not with a crash.
 *
 * <p>Run: {@code java ... io.disco.examples.barrier.BarrierExample [--endpoints host:port]}
 */
public final class BarrierExample {

    /** The scenario's name in its log and verdict. */
    public static final String SCENARIO = "barrier/basic";

    /** The bound of every wait of the scenario, s. */
    static final long WAIT_SECONDS = 15;

    /** How long the scenario watches for a worker that must not move yet, ms. */
    static final long QUIET_MILLIS = 500;

    private static final Duration WAIT = Duration.ofSeconds(WAIT_SECONDS);

    private static final int WORKERS = 3;

    private BarrierExample() {}

    /**
     * Runs the example.
     *
     * @param args {@code [--endpoints host:port[,...]]}
     */
    public static void main(String[] args) {
        Cli cli = Cli.parse(args, 0);
        System.exit(run(cli.endpoints(), "/disco/examples/barrier/basic").print());
    }

    /**
     * Runs the scenario on etcd.
     *
     * @param endpoints etcd client URLs
     * @param ns the prefix of the barriers' names
     * @return the verdict; never throws for a failed step
     */
    public static Verdict run(List<String> endpoints, String ns) {
        return EtcdScenario.run(
                endpoints,
                backend -> run(backend, ns),
                failure -> new Verdict(SCENARIO, false, "step failed: " + failure));
    }

    /**
     * Runs the scenario on {@code demo}: four clients over its backend (the migrator's and three workers').
     *
     * @param demo where the clients are opened
     * @param ns the prefix of the barriers' names
     * @return the verdict; never throws for a failed step (a backend without barriers fails the step that needed
     *     one)
     */
    public static Verdict run(DemoBackend demo, String ns) {
        Say say = new Say(SCENARIO);
        List<Disco> clients = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS, r -> {
            Thread t = new Thread(r, "barrier-worker");
            t.setDaemon(true);
            return t;
        });
        String[] step = {"open the clients"};
        try {
            for (int i = 0; i <= WORKERS; i++) {
                clients.add(Disco.over(demo.backend()));
            }
            String problem = migration(say, clients, ns + "/migration", pool, step);
            if (problem == null) {
                problem = batch(say, clients.subList(1, clients.size()), ns + "/batch", pool, step);
            }
            return problem != null
                    ? new Verdict(SCENARIO, false, problem)
                    : new Verdict(
                            SCENARIO,
                            true,
                            "no worker started before the migrator lowered the barrier; the double barrier let the"
                                    + " three in only once the third entered and out only once the last left");
        } catch (Exception e) {
            return new Verdict(SCENARIO, false, "step failed: " + FailedStep.describe(step[0], e));
        } finally {
            pool.shutdownNow();
            for (Disco c : clients) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    say.step("closing a client failed: %s", e);
                }
            }
        }
    }

    /**
     * Part 1: the migrator ({@code clients[0]}) holds the barrier up while the workers wait at it.
     *
     * @return what went wrong, or null
     */
    private static String migration(Say say, List<Disco> clients, String name, ExecutorService pool, String[] step)
            throws Exception {
        step[0] = "the migrator raises " + name;
        Barrier gate = clients.get(0).barrier(name);
        boolean raised = gate.hold();
        say.step("the migrator raises %s (raised by this call: %s) and starts migrating", name, raised);
        if (!gate.isHeld()) {
            return "the barrier is not up after hold()";
        }
        CountDownLatch waiting = new CountDownLatch(WORKERS);
        CountDownLatch started = new CountDownLatch(1);
        List<Future<Long>> starts = new ArrayList<>();
        step[0] = "the workers await the barrier";
        for (int i = 1; i <= WORKERS; i++) {
            Barrier mine = clients.get(i).barrier(name);
            String who = "w" + i;
            starts.add(pool.submit(() -> {
                waiting.countDown();
                if (!mine.await(WAIT)) {
                    throw new TimeoutException(who + " still waiting at the barrier after " + WAIT);
                }
                long at = System.nanoTime();
                started.countDown();
                say.step("%s sees the barrier down and starts", who);
                return at;
            }));
        }
        if (!waiting.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            return "the workers did not reach the barrier within " + WAIT;
        }
        if (started.await(QUIET_MILLIS, TimeUnit.MILLISECONDS)) {
            return "a worker started while the migrator still held the barrier up";
        }
        rethrowFailures(starts);
        say.step("%d workers wait at the barrier; none started during %d ms of migration", WORKERS, QUIET_MILLIS);
        step[0] = "the migrator lowers " + name;
        long releasedAt = System.nanoTime();
        boolean lowered = gate.release();
        say.step("the migration is done: the migrator lowers the barrier (lowered by this call: %s)", lowered);
        step[0] = "the workers start";
        for (int i = 0; i < WORKERS; i++) {
            if (get(starts.get(i)) < releasedAt) {
                return "w" + (i + 1) + " started before the migrator released the barrier";
            }
        }
        return null;
    }

    /**
     * Parts 2 and 3: the workers enter the double barrier for three one after the other, then leave it the same way.
     *
     * @return what went wrong, or null
     */
    private static String batch(Say say, List<Disco> workers, String name, ExecutorService pool, String[] step)
            throws Exception {
        List<DoubleBarrier> seats = new ArrayList<>();
        for (Disco w : workers) {
            seats.add(w.doubleBarrier(name, WORKERS));
        }
        long[] called = new long[WORKERS];
        CountDownLatch passed = new CountDownLatch(1);
        List<Future<Long>> passes = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            int w = i;
            step[0] = "w" + (w + 1) + " enters " + name;
            passes.add(pool.submit(timed(called, w, passed, () -> seats.get(w).enter(WAIT), "enter")));
            if (w < WORKERS - 1) {
                if (passed.await(QUIET_MILLIS, TimeUnit.MILLISECONDS)) {
                    return "a worker passed the double barrier with " + (w + 1) + " of " + WORKERS + " entered";
                }
                rethrowFailures(passes);
                say.step(
                        "w%d enters the double barrier for %d and waits (%s)",
                        w + 1, WORKERS, states(seats.subList(0, w + 1)));
            } else {
                say.step("w%d enters: the third", w + 1);
            }
        }
        long[] passedAt = new long[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            passedAt[i] = get(passes.get(i));
        }
        for (int i = 0; i < WORKERS; i++) {
            if (passedAt[i] < called[WORKERS - 1]) {
                return "w" + (i + 1) + " passed the double barrier before the third worker entered";
            }
        }
        say.step("all three pass together (%s)", states(seats));

        long[] leaveCalled = new long[WORKERS];
        CountDownLatch left = new CountDownLatch(1);
        List<Future<Long>> leaves = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            int w = i;
            step[0] = "w" + (w + 1) + " leaves " + name;
            leaves.add(
                    pool.submit(timed(leaveCalled, w, left, () -> seats.get(w).leave(WAIT), "leave")));
            if (w == WORKERS - 2) {
                if (left.await(QUIET_MILLIS, TimeUnit.MILLISECONDS)) {
                    return "a worker returned from leave() while w" + WORKERS + " was still inside";
                }
                rethrowFailures(leaves);
                say.step("w1 and w2 leave and wait for w%d (%s)", WORKERS, states(seats));
            }
        }
        say.step("w%d leaves: the last", WORKERS);
        for (int i = 0; i < WORKERS; i++) {
            if (get(leaves.get(i)) < leaveCalled[WORKERS - 1]) {
                return "w" + (i + 1) + " returned from leave() before the last worker left";
            }
        }
        say.step("all three return from leave() together (%s)", states(seats));
        return null;
    }

    /** A blocking call of the double barrier that returns whether it got through within its time. */
    private interface Gate {
        boolean pass() throws InterruptedException;
    }

    /**
     * The task of worker {@code w}: notes when it calls in {@code calledAt[w]}, makes the call, counts {@code moved}
     * down when it got through.
     *
     * @return the moment it got through
     */
    private static Callable<Long> timed(long[] calledAt, int w, CountDownLatch moved, Gate call, String what) {
        return () -> {
            calledAt[w] = System.nanoTime();
            if (!call.pass()) {
                throw new TimeoutException("w" + (w + 1) + ": " + what + "() did not get through within " + WAIT);
            }
            long at = System.nanoTime();
            moved.countDown();
            return at;
        };
    }

    /** Throws the failure of the first task that ended with one already (the step failed), if any. */
    private static void rethrowFailures(List<Future<Long>> tasks) throws Exception {
        for (Future<Long> f : tasks) {
            if (f.isDone()) {
                get(f);
            }
        }
    }

    /** @return the task's value, within {@link #WAIT}; its failure as the exception it threw */
    private static long get(Future<Long> task) throws Exception {
        try {
            return task.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    private static String states(List<DoubleBarrier> seats) {
        List<String> s = new ArrayList<>();
        for (int i = 0; i < seats.size(); i++) {
            s.add("w" + (i + 1) + " " + seats.get(i).state());
        }
        return String.join(", ", s);
    }
}
