package io.disco.election;

import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LeadershipRunner} over any backend: one runner thread that asks the factory for an
 * {@link ElectionService} per attempt (for etcd: one on a session of its own), campaigns, runs each
 * term's task on a thread of its own and waits for the first of the task's return, the election's
 * {@code done()} (a lost lease or a deleted key), a relinquish and a close. An attempt ends, and its
 * service is closed, when the service's lease is lost, when the runner stops, or when the factory or
 * a campaign failed; the next attempt follows after the backoff.
 *
 * <p>Why the guarantees hold: a term's task runs only between the campaign's return and the end of
 * that term, and the runner thread, which alone starts tasks, joins each task thread before it
 * campaigns again, so two tasks never overlap. The loss signal is the election's {@code done()}
 * itself (fired by the backend's expiry detection, which no user code can delay), so the task hears
 * of it as soon as {@code done()} fires; {@link RunnerTerm} interrupts the task before it completes
 * the term's end. A term's token is its key's incarnation (for etcd: its CreateRevision), and every
 * later term (of this runner, on a new service, or of another candidate) has a key created later, so
 * tokens strictly increase across terms.
 */
final class ElectionLeadershipRunner implements LeadershipRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ElectionLeadershipRunner.class);

    private final String name;
    private final Supplier<? extends ElectionService> elections;
    private final Options options;
    private final Executor listenerExecutor;
    private final ExecutorService ownListenerThread;
    private final Thread runner;
    private final Object lock = new Object();
    /** Completed by close(): every wait of the runner thread also waits on it. */
    private final CompletableFuture<LeaderTerm.End> closing = new CompletableFuture<>();
    /** The running term, and the service it belongs to; guarded by {@link #lock}. */
    private RunnerTerm current;

    private ElectionService currentElection;
    /** The campaign in progress; guarded by {@link #lock}. */
    private CompletableFuture<Leadership> pending;

    ElectionLeadershipRunner(String name, Supplier<? extends ElectionService> elections, Options options) {
        this.name = name;
        this.elections = elections;
        this.options = options;
        if (options.listenerExecutor().isPresent()) {
            this.listenerExecutor = options.listenerExecutor().get();
            this.ownListenerThread = null;
        } else {
            this.ownListenerThread = Executors.newSingleThreadExecutor(r -> daemon(r, "disco-leader-listener " + name));
            this.listenerExecutor = ownListenerThread;
        }
        this.runner = daemon(this::run, "disco-leader-runner " + name);
    }

    ElectionLeadershipRunner start() {
        runner.start();
        return this;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public Optional<Leadership> leadership() {
        synchronized (lock) {
            return current == null || !current.isActive() ? Optional.empty() : Optional.of(current.leadership);
        }
    }

    @Override
    public boolean relinquish() {
        RunnerTerm term;
        synchronized (lock) {
            term = current;
        }
        // stopped outside the lock: completing ended() runs the task's callbacks on this thread
        return term != null && term.stop(LeaderTerm.End.RELINQUISHED);
    }

    @Override
    public boolean isRunning() {
        return runner.isAlive();
    }

    @Override
    public void close() {
        if (signalClose()) {
            return; // called by the task itself: the runner finishes once the task returns
        }
        boolean interrupted = false;
        while (runner.isAlive() && Thread.currentThread() != runner) {
            try {
                runner.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean close(Duration timeout) {
        long nanos = Timeouts.nanos(timeout); // zero or less: no wait; too long to count: no limit
        if (signalClose()) {
            return false; // called by the task itself: it cannot end while it waits here
        }
        long deadline = System.nanoTime() + nanos; // compared by difference: wraps safely for a bound of Long.MAX_VALUE
        boolean interrupted = false;
        while (runner.isAlive() && Thread.currentThread() != runner) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break; // the task still runs (leadership kept) or the resign is under way: the runner finishes alone
            }
            try {
                TimeUnit.NANOSECONDS.timedJoin(runner, left);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return !runner.isAlive();
    }

    /**
     * Signals the close: ends the current term, withdraws a pending campaign. Resigning is left to
     * the runner thread, after the task has returned.
     *
     * @return whether the caller is the current term's task (it must not wait for itself)
     */
    private boolean signalClose() {
        closing.complete(LeaderTerm.End.CLOSED);
        CompletableFuture<Leadership> campaign;
        RunnerTerm term;
        synchronized (lock) {
            term = current;
            campaign = pending;
        }
        if (term != null) {
            term.stop(LeaderTerm.End.CLOSED); // a term made current after this sees closing in runTerm
        }
        if (campaign != null) {
            campaign.cancel(true); // withdraws the candidacy
        }
        synchronized (lock) {
            return current != null && current.task == Thread.currentThread();
        }
    }

    /** The runner thread: the loop, then the own listener thread is let go (queued notifications still run). */
    private void run() {
        try {
            loop();
        } finally {
            if (ownListenerThread != null) {
                ownListenerThread.shutdown();
            }
        }
    }

    private void loop() {
        long backoff = options.initialBackoff().toNanos();
        while (!closing.isDone()) {
            try (ElectionService election = openElection();
                    Observation ignored = election.observe(this::leaderChanged)) {
                election.done()
                        .whenComplete((v, e) -> stopCurrent(
                                election, election.err().isPresent() ? LeaderTerm.End.LOST : LeaderTerm.End.CLOSED));
                while (!closing.isDone()) {
                    Optional<Leadership> won = campaign(election);
                    if (won.isEmpty()) {
                        return; // closed
                    }
                    backoff = options.initialBackoff().toNanos();
                    LeaderTerm.End end = runTerm(election, won.get());
                    if (end == LeaderTerm.End.LOST) {
                        break;
                    }
                    resign(election, won.get());
                    if (end == LeaderTerm.End.CLOSED
                            || (!options.requeue()
                                    && (end == LeaderTerm.End.COMPLETED || end == LeaderTerm.End.FAILED))) {
                        return;
                    }
                }
            } catch (LeadershipLostException e) {
                LOG.info(
                        "leadership runner {}: lease lost while campaigning; a new attempt in {} ms",
                        name,
                        TimeUnit.NANOSECONDS.toMillis(backoff));
            } catch (RuntimeException e) {
                LOG.warn(
                        "leadership runner {}: {}; a new attempt in {} ms",
                        name,
                        e.toString(),
                        TimeUnit.NANOSECONDS.toMillis(backoff));
            }
            if (closing.isDone()) {
                return;
            }
            try {
                closing.get(backoff, TimeUnit.NANOSECONDS);
                return;
            } catch (TimeoutException expected) {
                backoff = Math.min(options.maxBackoff().toNanos(), backoff * 2);
            } catch (InterruptedException | ExecutionException e) {
                return; // nobody interrupts the runner thread but the JVM's shutdown
            }
        }
    }

    /** This attempt's service, from the factory; a factory that returns null fails the attempt. */
    private ElectionService openElection() {
        ElectionService election = elections.get();
        if (election == null) {
            throw new IllegalStateException("the election factory returned null");
        }
        return election;
    }

    /** Campaigns until this candidate leads; empty if the runner was closed meanwhile. */
    private Optional<Leadership> campaign(ElectionService election) {
        CompletableFuture<Leadership> campaign = election.campaignAsync(options.value());
        synchronized (lock) {
            pending = campaign;
        }
        if (closing.isDone()) {
            campaign.cancel(true);
        }
        try {
            return Optional.of(campaign.join());
        } catch (CancellationException e) {
            return Optional.empty();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
        } finally {
            synchronized (lock) {
                pending = null;
            }
        }
    }

    /** Ends the running term if it belongs to {@code election} (a late {@code done()} of an earlier attempt's service does not). */
    private void stopCurrent(ElectionService election, LeaderTerm.End end) {
        RunnerTerm term;
        synchronized (lock) {
            term = currentElection == election ? current : null;
        }
        if (term != null) {
            term.stop(end); // a term made current after this sees done() in runTerm
        }
    }

    /** Resigns a term that was not lost; a loss found by the resign is only logged (the term has ended anyway). */
    private void resign(ElectionService election, Leadership term) {
        try {
            election.resign();
        } catch (RuntimeException e) {
            LOG.info("leadership runner {}: resigning term {} found: {}", name, term.token(), e.toString());
        }
    }

    /** Runs one term's task; returns once it has returned, with why the term ended. */
    private LeaderTerm.End runTerm(ElectionService election, Leadership won) {
        RunnerTerm term = new RunnerTerm(won);
        synchronized (lock) {
            current = term;
            currentElection = election;
        }
        // Ends that came before the term was current (close(), done() register on current):
        if (closing.isDone()) {
            term.stop(LeaderTerm.End.CLOSED);
        }
        if (election.done().toCompletableFuture().isDone()) {
            term.stop(election.err().isPresent() ? LeaderTerm.End.LOST : LeaderTerm.End.CLOSED);
        }
        notify(() -> options.listener().elected(won));
        Thread task = daemon(
                () -> {
                    term.enter();
                    Throwable failure = null;
                    try {
                        options.task().lead(term);
                    } catch (Throwable t) {
                        failure = t;
                    }
                    if (term.leave(failure) && failure != null) {
                        LOG.warn("leadership runner {}: the task of term {} failed", name, won.token(), failure);
                    }
                },
                "disco-leader-task " + name + " term " + won.token());
        term.task = task;
        task.start();
        // The term's end interrupts the task (RunnerTerm.stop) before it completes ended: here it only waits.
        LeaderTerm.End end = term.ended.join();
        boolean interrupted = false;
        while (task.isAlive()) {
            try {
                task.join(); // never two tasks at once: wait, however long the task takes to stop
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        synchronized (lock) {
            current = null;
            currentElection = null;
        }
        Throwable cause = end == LeaderTerm.End.LOST
                ? election.err().orElse(null)
                : end == LeaderTerm.End.FAILED ? term.failure : null;
        notify(() -> options.listener().revoked(won, end, cause));
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return end;
    }

    private void leaderChanged(Leadership leader) {
        notify(() -> options.listener().leaderChanged(leader));
    }

    private void notify(Runnable call) {
        try {
            listenerExecutor.execute(() -> {
                try {
                    call.run();
                } catch (RuntimeException e) {
                    LOG.warn("leadership runner {}: a listener threw", name, e);
                }
            });
        } catch (RuntimeException e) {
            LOG.warn("leadership runner {}: the listener executor refused a notification: {}", name, e.toString());
        }
    }

    @Override
    public String toString() {
        return "LeadershipRunner[" + name + ", " + (isRunning() ? "running" : "stopped") + "]";
    }
}
