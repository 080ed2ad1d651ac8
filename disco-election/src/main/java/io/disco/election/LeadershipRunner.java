package io.disco.election;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Runs a {@link LeaderTask} while, and only while, this candidate leads, and heals itself: after a
 * lost lease it opens a new session (a new service from its factory, with bounded exponential
 * backoff) and campaigns again.
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>Never two tasks at once in one runner: the next term's task starts only after the previous
 *       one has returned.</li>
 *   <li>The task learns of the end of its term no later than the election's {@code done()} fires:
 *       its thread is interrupted, and then {@link LeaderTerm#ended()} completes, so every
 *       interruptible wait of the task, {@link LeaderTerm#awaitEnd} included, throws
 *       {@link InterruptedException} at the end; the interrupt never reaches another term's task
 *       (details in {@link LeaderTerm}). It holds its term's token, so a guarded resource rejects
 *       whatever it still sends after a newer leader's first request.</li>
 *   <li>When the task returns normally it resigns, and campaigns again if {@link Options#requeue()}
 *       (the default); when it throws, the failure is logged, the term resigned, and the same rule
 *       applies. After a loss it always campaigns again, on a new session.</li>
 *   <li>{@link #relinquish()} ends the current term (the task is signalled and awaited), resigns so
 *       that the next candidate in line leads, and campaigns again behind it.</li>
 *   <li>Listener callbacks run on the listener executor, never on a session's threads.</li>
 *   <li>{@link #close()} ends the current term, waits for the task to return, resigns and closes the
 *       services (and so the sessions) the runner opened; it never closes the caller's backend
 *       client.</li>
 * </ul>
 * Created started, by {@link #start} over any backend's elections, or by a provider's shortcut (for
 * etcd: {@code EtcdProvider.newLeadershipRunner}).
 */
public interface LeadershipRunner extends AutoCloseable {

    /**
     * Starts a runner over any backend: it asks {@code elections} for a new {@link ElectionService}
     * for each attempt, campaigns with it, and runs {@code options.task()} for each term won.
     *
     * <p>The factory's contract:
     * <ul>
     *   <li>It is called on the runner's own thread: once at the start, and again after every attempt
     *       that ended (the service's lease lost, its {@code done()} complete, or the factory or a
     *       campaign failed), after the backoff of {@link Options}. A healthy service is kept for any
     *       number of terms (a relinquish, or a task that returned with requeue, campaigns again on
     *       it).</li>
     *   <li>Every call must return a <em>new</em> service, one candidate of the election the runner
     *       should lead, that owns its backend session (for etcd: {@code EtcdProvider.newElection},
     *       never {@code session.newElection} on a shared session), or a candidate of an owner that is
     *       replaced after a loss (the client's {@code Disco.election(name)}, which is what
     *       {@code Disco.leadershipRunner} uses): when its lease is lost it must complete {@code done()},
     *       and closing it must release everything it holds.</li>
     *   <li>The runner owns every service it got: it closes it when the attempt ends, and when the
     *       runner is closed. It closes nothing else (not the backend client the factory uses).</li>
     *   <li>A factory that throws, or returns null, fails that attempt: logged, and tried again after
     *       the backoff, until the runner is closed.</li>
     * </ul>
     *
     * @param name the election's name, for the runner's thread names and log lines; not blank
     * @param elections opens one service, on a session of its own, per attempt
     * @param options the value, task, listener, requeue and backoff
     * @return the running runner; close it to stop
     * @throws NullPointerException if an argument is null (nothing is started)
     * @throws IllegalArgumentException if {@code name} is blank (nothing is started)
     */
    static LeadershipRunner start(String name, Supplier<? extends ElectionService> elections, Options options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(elections, "elections");
        Objects.requireNonNull(options, "options");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank, got '" + name + "'");
        }
        return new ElectionLeadershipRunner(name, elections, options).start();
    }

    /** @return the current term's leadership, if this runner leads now */
    Optional<Leadership> leadership();

    /**
     * Steps down if leading: ends the term, waits for the task to return, resigns, and campaigns
     * again behind the candidates already waiting. Returns once the request is recorded; the
     * listener's {@code revoked(..., RELINQUISHED, null)} tells when it is done.
     *
     * @return whether this runner was leading
     */
    boolean relinquish();

    /** @return whether the runner is still running (not closed, and not stopped after a task ended without requeue) */
    boolean isRunning();

    /**
     * Stops: ends the current term (signal and interrupt), waits for the task to return, resigns,
     * withdraws a pending campaign and closes the sessions the runner opened. Idempotent. Called by
     * the task itself, it only signals and returns; the runner stops once the task has returned.
     *
     * <p>The wait is not bounded: a task that ignores its signal (neither returns on the interrupt
     * nor watches {@link LeaderTerm#ended()}) keeps this call waiting until it returns, and keeps the
     * leadership meanwhile. That is deliberate: when {@code close()} returns, no task of this runner
     * runs and its key is gone, which is what a try-with-resources block promises; a bounded
     * {@code close()} would have to break one of the two silently. Where a bound matters (a shutdown
     * hook, a container's stop timeout) call {@link #close(Duration)} and act on its answer.
     */
    @Override
    void close();

    /**
     * Stops as {@link #close()} does, but waits at most {@code timeout} for the runner to finish.
     *
     * <p>The signal is sent at once (the term ends, the task's thread is interrupted, a pending
     * campaign is withdrawn). If the task returns and the runner resigns and closes its sessions
     * within the bound, this returns {@code true} and the runner is closed exactly as by
     * {@code close()}. Otherwise it returns {@code false} and the runner keeps stopping on its own:
     * as long as the task runs, the leadership is <em>kept</em> (the key stays, the lease is renewed),
     * because resigning would let another candidate lead while this task still acts as leader; once
     * the task returns, the runner resigns and closes its sessions by itself (the listener's
     * {@code revoked(..., CLOSED, null)} tells when). A later {@code close()} waits for that, a later
     * {@code close(Duration)} waits again up to its bound. Called by the task itself, it only signals
     * and returns {@code false} (the task cannot end while it waits for itself).
     *
     * <p>The bound follows {@link io.disco.fencing.Timeouts}' rule: zero or less only signals and reports whether
     * the runner had already stopped, and a bound too long to count in nanoseconds waits without a limit.
     *
     * @param timeout the longest wait; zero or less only signals and reports whether the runner had already stopped
     * @return whether the runner has stopped (task returned, leadership given up, sessions closed)
     * @throws NullPointerException if {@code timeout} is null
     */
    boolean close(Duration timeout);

    /**
     * The runner's settings, immutable. The common case is {@link #of(String, LeaderTask)}; anything
     * else goes through {@link #builder(String, LeaderTask)}.
     */
    final class Options {

        private final String value;
        private final LeaderTask task;
        private final LeadershipListener listener;
        private final Executor listenerExecutor;
        private final boolean requeue;
        private final Duration initialBackoff;
        private final Duration maxBackoff;

        private Options(Builder b) {
            this.value = b.value;
            this.task = b.task;
            this.listener = b.listener;
            this.listenerExecutor = b.listenerExecutor;
            this.requeue = b.requeue;
            this.initialBackoff = b.initialBackoff;
            this.maxBackoff = b.maxBackoff;
        }

        /**
         * The defaults: no listener, the runner's own listener thread, requeue, backoff from 100 ms to
         * 10 s.
         *
         * @param value the value to campaign with (for example this node's address)
         * @param task what to run while leading
         * @return the options
         * @throws NullPointerException if {@code value} or {@code task} is null
         */
        public static Options of(String value, LeaderTask task) {
            return builder(value, task).build();
        }

        /**
         * A builder that starts from the defaults of {@link #of(String, LeaderTask)}.
         *
         * @param value the value to campaign with (for example this node's address)
         * @param task what to run while leading
         * @return a new builder
         * @throws NullPointerException if {@code value} or {@code task} is null
         */
        public static Builder builder(String value, LeaderTask task) {
            return new Builder(value, task);
        }

        /** @return a builder that starts from these options */
        public Builder toBuilder() {
            Builder b =
                    new Builder(value, task).listener(listener).requeue(requeue).backoff(initialBackoff, maxBackoff);
            b.listenerExecutor = listenerExecutor;
            return b;
        }

        /** @return the value to campaign with */
        public String value() {
            return value;
        }

        /** @return what to run while leading */
        public LeaderTask task() {
            return task;
        }

        /** @return told of terms and leader changes */
        public LeadershipListener listener() {
            return listener;
        }

        /** @return where the listener runs; empty for the runner's own single thread */
        public Optional<Executor> listenerExecutor() {
            return Optional.ofNullable(listenerExecutor);
        }

        /** @return whether to campaign again after the task returned or threw */
        public boolean requeue() {
            return requeue;
        }

        /** @return the first wait before a new session after a loss or a failed campaign */
        public Duration initialBackoff() {
            return initialBackoff;
        }

        /** @return the longest such wait; the wait doubles up to it and resets after a won campaign */
        public Duration maxBackoff() {
            return maxBackoff;
        }

        @Override
        public String toString() {
            return "LeadershipRunner.Options[value=" + value + ", requeue=" + requeue + ", backoff=" + initialBackoff
                    + ".." + maxBackoff + (listenerExecutor == null ? "" : ", listenerExecutor=" + listenerExecutor)
                    + "]";
        }

        /** Builds {@link Options}; each setter checks its argument at once and changes nothing when it refuses it. */
        public static final class Builder {

            private final String value;
            private final LeaderTask task;
            private LeadershipListener listener = new LeadershipListener() {};
            private Executor listenerExecutor;
            private boolean requeue = true;
            private Duration initialBackoff = Duration.ofMillis(100);
            private Duration maxBackoff = Duration.ofSeconds(10);

            private Builder(String value, LeaderTask task) {
                this.value = Objects.requireNonNull(value, "value");
                this.task = Objects.requireNonNull(task, "task");
            }

            /**
             * @param listener told of terms and leader changes (default: none)
             * @return this builder
             * @throws NullPointerException if {@code listener} is null
             */
            public Builder listener(LeadershipListener listener) {
                this.listener = Objects.requireNonNull(listener, "listener");
                return this;
            }

            /**
             * @param executor where the listener runs (default: the runner's own single thread)
             * @return this builder
             * @throws NullPointerException if {@code executor} is null
             */
            public Builder listenerExecutor(Executor executor) {
                this.listenerExecutor = Objects.requireNonNull(executor, "executor");
                return this;
            }

            /**
             * @param requeue whether to campaign again after the task returned or threw (default: true)
             * @return this builder
             */
            public Builder requeue(boolean requeue) {
                this.requeue = requeue;
                return this;
            }

            /**
             * @param initial the first wait before a new session, positive (default: 100 ms)
             * @param max the longest wait, at least {@code initial} (default: 10 s)
             * @return this builder
             * @throws NullPointerException if {@code initial} or {@code max} is null
             * @throws IllegalArgumentException if {@code initial} is not positive or {@code max < initial}
             */
            public Builder backoff(Duration initial, Duration max) {
                Objects.requireNonNull(initial, "initial");
                Objects.requireNonNull(max, "max");
                if (initial.isZero() || initial.isNegative()) {
                    throw new IllegalArgumentException("initial backoff must be positive, got " + initial);
                }
                if (max.compareTo(initial) < 0) {
                    throw new IllegalArgumentException(
                            "max backoff must be at least the initial " + initial + ", got " + max);
                }
                this.initialBackoff = initial;
                this.maxBackoff = max;
                return this;
            }

            /** @return the options */
            public Options build() {
                return new Options(this);
            }
        }
    }
}
