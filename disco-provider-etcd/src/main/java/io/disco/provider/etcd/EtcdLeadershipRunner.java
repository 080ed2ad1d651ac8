package io.disco.provider.etcd;

import io.disco.election.ElectionService;
import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.election.LeadershipRunner;
import io.disco.election.Observation;
import io.disco.fencing.FencingToken;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LeadershipRunner} on etcd: one runner thread that opens a session, campaigns, runs each
 * term's task on a thread of its own and waits for the first of the task's return, the election's
 * {@code done()} (a lost lease or a deleted key), a relinquish and a close.
 *
 * <p>Why the guarantees hold: a term's task runs only between the campaign's return and the end of
 * that term, and the runner thread, which alone starts tasks, joins each task thread before it
 * campaigns again, so two tasks never overlap. The loss signal is the election's {@code done()}
 * itself (fired by the session's expiry detection, which no user code can delay), so the task hears
 * of it as soon as {@code done()} fires. A term's token is its key's CreateRevision, and every later
 * term (of this runner, on a new session, or of another candidate) has a key created later, so
 * tokens strictly increase across terms.
 */
final class EtcdLeadershipRunner implements LeadershipRunner {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdLeadershipRunner.class);

    private final Client client;
    private final String prefix;
    private final Options options;
    private final EtcdOptions sessionOptions;
    private final Executor listenerExecutor;
    private final ExecutorService ownListenerThread;
    private final Thread runner;
    private final Object lock = new Object();
    /** Completed by close(): every wait of the runner thread also waits on it. */
    private final CompletableFuture<LeaderTerm.End> closing = new CompletableFuture<>();
    /** Guarded by {@link #lock}. */
    private Term current;
    /** The campaign in progress; guarded by {@link #lock}. */
    private CompletableFuture<Leadership> pending;

    EtcdLeadershipRunner(Client client, String prefix, Options options, EtcdOptions sessionOptions) {
        this.client = client;
        this.prefix = prefix;
        this.options = options;
        this.sessionOptions = sessionOptions;
        if (options.listenerExecutor() != null) {
            this.listenerExecutor = options.listenerExecutor();
            this.ownListenerThread = null;
        } else {
            this.ownListenerThread = Executors.newSingleThreadExecutor(r -> daemon(r, "disco-leader-listener " + prefix));
            this.listenerExecutor = ownListenerThread;
        }
        this.runner = daemon(this::loop, "disco-leader-runner " + prefix);
    }

    EtcdLeadershipRunner start() {
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
        synchronized (lock) {
            return current != null && current.stop(LeaderTerm.End.RELINQUISHED);
        }
    }

    @Override
    public boolean isRunning() {
        return runner.isAlive();
    }

    @Override
    public void close() {
        closing.complete(LeaderTerm.End.CLOSED);
        CompletableFuture<Leadership> campaign;
        synchronized (lock) {
            if (current != null) {
                current.stop(LeaderTerm.End.CLOSED);
            }
            campaign = pending;
        }
        if (campaign != null) {
            campaign.cancel(true); // withdraws the candidacy
        }
        synchronized (lock) {
            if (current != null && current.task == Thread.currentThread()) {
                return; // called by the task itself: the runner finishes once the task returns
            }
        }
        boolean interrupted = false;
        while (runner.isAlive() && Thread.currentThread() != runner) {
            try {
                runner.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (ownListenerThread != null) {
            ownListenerThread.shutdown();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        long backoff = options.initialBackoff().toNanos();
        while (!closing.isDone()) {
            try (EtcdSession session = EtcdSession.open(client, sessionOptions);
                 ElectionService election = session.newElection(prefix);
                 Observation ignored = election.observe(this::leaderChanged)) {
                election.done().whenComplete((v, e) -> stopCurrent(election.err().isPresent()
                        ? LeaderTerm.End.LOST : LeaderTerm.End.CLOSED));
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
                            || (!options.requeue() && (end == LeaderTerm.End.COMPLETED || end == LeaderTerm.End.FAILED))) {
                        return;
                    }
                }
            } catch (LeadershipLostException e) {
                LOG.info("leadership runner {}: lease lost while campaigning; a new session in {} ms", prefix,
                        TimeUnit.NANOSECONDS.toMillis(backoff));
            } catch (RuntimeException e) {
                LOG.warn("leadership runner {}: {}; a new session in {} ms", prefix, e.toString(),
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

    private void stopCurrent(LeaderTerm.End end) {
        synchronized (lock) {
            if (current != null) {
                current.stop(end);
            }
        }
    }

    /** Resigns a term that was not lost; a loss found by the resign is only logged (the term has ended anyway). */
    private void resign(ElectionService election, Leadership term) {
        try {
            election.resign();
        } catch (RuntimeException e) {
            LOG.info("leadership runner {}: resigning term {} found: {}", prefix, term.token(), e.toString());
        }
    }

    /** Runs one term's task; returns once it has returned, with why the term ended. */
    private LeaderTerm.End runTerm(ElectionService election, Leadership won) {
        Term term = new Term(won);
        synchronized (lock) {
            current = term;
        }
        // Ends that came before the term was current (close(), done() register on current):
        if (closing.isDone()) {
            term.stop(LeaderTerm.End.CLOSED);
        }
        if (election.done().toCompletableFuture().isDone()) {
            term.stop(election.err().isPresent() ? LeaderTerm.End.LOST : LeaderTerm.End.CLOSED);
        }
        notify(() -> options.listener().elected(won));
        Thread task = daemon(() -> {
            term.enter();
            Throwable failure = null;
            try {
                options.task().lead(term);
            } catch (Throwable t) {
                failure = t;
            }
            if (term.leave(failure) && failure != null) {
                LOG.warn("leadership runner {}: the task of term {} failed", prefix, won.token(), failure);
            }
        }, "disco-leader-task " + prefix + " term " + won.token());
        term.task = task;
        task.start();
        // The term's end interrupts the task (Term.stop) before it completes ended: here it only waits.
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
        }
        Throwable cause = end == LeaderTerm.End.LOST ? election.err().orElse(null)
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
                    LOG.warn("leadership runner {}: a listener threw", prefix, e);
                }
            });
        } catch (RuntimeException e) {
            LOG.warn("leadership runner {}: the listener executor refused a notification: {}", prefix, e.toString());
        }
    }

    @Override
    public String toString() {
        return "EtcdLeadershipRunner[" + prefix + ", " + (isRunning() ? "running" : "stopped") + "]";
    }

    /**
     * One term as its task sees it. Its end is decided once (the first {@link #stop} wins), and in
     * this order: the end is recorded ({@link #isActive()}, {@link #end()}), the task's thread is
     * interrupted if the task is running and the end is not its return, and only then is
     * {@link #ended()} completed, so that no wait of the task can return normally on the end
     * (issue 36). The interrupt is sent under {@link #guard}, which the task's return also takes, so
     * it never lands after {@link #leave} (and the thread ends there: the next term's task runs on a
     * new thread).
     */
    private static final class Term implements LeaderTerm {

        /** Where the term's task is: it moves forward only, one step at a time. */
        private enum TaskState { NOT_STARTED, RUNNING, RETURNED }

        final Leadership leadership;
        final CompletableFuture<End> ended = new CompletableFuture<>();
        private final Object guard = new Object();
        /** The end, once decided; written under {@link #guard}. */
        private volatile End end;
        /** Guarded by {@link #guard}. */
        private TaskState state = TaskState.NOT_STARTED;
        volatile Throwable failure;
        /** The thread running this term's task; set before it starts. */
        volatile Thread task;

        Term(Leadership leadership) {
            this.leadership = leadership;
        }

        private void move(TaskState from, TaskState to) {
            if (state != from) {
                throw new IllegalStateException("term " + leadership.token() + ": task " + state + ", expected " + from + " for " + to);
            }
            state = to;
        }

        /** On the task's thread, before the task: a term that ended before its task started interrupts it now. */
        void enter() {
            synchronized (guard) {
                move(TaskState.NOT_STARTED, TaskState.RUNNING);
                if (end != null) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /**
         * On the task's thread, once the task returned ({@code failure} null) or threw: no interrupt
         * is sent from here on. Ends the term as COMPLETED or FAILED unless it had ended.
         *
         * @return whether the task's return ended the term
         */
        boolean leave(Throwable failure) {
            synchronized (guard) {
                move(TaskState.RUNNING, TaskState.RETURNED);
            }
            Thread.interrupted(); // an interrupt that landed after the task returned is nobody's: this thread ends
            if (failure != null) {
                this.failure = failure;
            }
            return stop(failure == null ? End.COMPLETED : End.FAILED);
        }

        /** Ends the term with {@code end} unless it has ended; returns whether this call ended it. */
        boolean stop(End end) {
            synchronized (guard) {
                if (this.end != null) {
                    return false;
                }
                this.end = end;
                if (state == TaskState.RUNNING) {
                    task.interrupt(); // before ended completes: every wait of the task sees the end
                }
            }
            ended.complete(end);
            return true;
        }

        @Override
        public Leadership leadership() {
            return leadership;
        }

        @Override
        public FencingToken token() {
            return leadership.token();
        }

        @Override
        public boolean isActive() {
            return end == null;
        }

        @Override
        public CompletionStage<End> ended() {
            return ended.minimalCompletionStage();
        }

        @Override
        public Optional<End> end() {
            return Optional.ofNullable(end);
        }

        @Override
        public boolean awaitEnd(Duration timeout) throws InterruptedException {
            if (timeout == null) {
                throw new IllegalArgumentException("timeout must not be null");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted before awaiting the end of term " + leadership.token());
            }
            try {
                ended.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                return true;
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public String toString() {
            return "LeaderTerm[" + leadership + ", " + end().map(Enum::name).orElse("active") + "]";
        }
    }
}
