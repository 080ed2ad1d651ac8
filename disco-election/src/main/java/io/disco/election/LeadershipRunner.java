package io.disco.election;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Runs a {@link LeaderTask} while, and only while, this candidate leads, and heals itself: after a
 * lost lease it opens a new session (with bounded exponential backoff) and campaigns again.
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
 *       sessions the runner opened; it never closes the caller's backend client.</li>
 * </ul>
 * Created started, by the provider (for etcd: {@code EtcdProvider.newLeadershipRunner}).
 */
public interface LeadershipRunner extends AutoCloseable {

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
     * withdraws a pending campaign and closes the sessions the runner opened. Idempotent. A task that
     * ignores its signal keeps this call waiting. Called by the task itself, it only signals and
     * returns; the runner stops once the task has returned.
     */
    @Override
    void close();

    /**
     * The runner's settings.
     *
     * @param value the value to campaign with (for example this node's address)
     * @param task what to run while leading
     * @param listener told of terms and leader changes
     * @param listenerExecutor where the listener runs; null for the runner's own single thread
     * @param requeue whether to campaign again after the task returned or threw
     * @param initialBackoff the first wait before a new session after a loss or a failed campaign
     * @param maxBackoff the longest such wait; the wait doubles up to it and resets after a won campaign
     */
    record Options(String value, LeaderTask task, LeadershipListener listener, Executor listenerExecutor,
                   boolean requeue, Duration initialBackoff, Duration maxBackoff) {

        /**
         * Validates the settings.
         *
         * @throws IllegalArgumentException if a value is missing or a backoff not positive, or
         *     {@code maxBackoff < initialBackoff}
         */
        public Options {
            if (value == null) {
                throw new IllegalArgumentException("value must not be null");
            }
            if (task == null) {
                throw new IllegalArgumentException("task must not be null");
            }
            if (listener == null) {
                throw new IllegalArgumentException("listener must not be null (use new LeadershipListener() {})");
            }
            if (initialBackoff == null || initialBackoff.isZero() || initialBackoff.isNegative()) {
                throw new IllegalArgumentException("initialBackoff must be positive, got " + initialBackoff);
            }
            if (maxBackoff == null || maxBackoff.compareTo(initialBackoff) < 0) {
                throw new IllegalArgumentException("maxBackoff must be at least initialBackoff, got " + maxBackoff);
            }
        }

        /**
         * The defaults: no listener, the runner's own listener thread, requeue, backoff from 100 ms to
         * 10 s.
         *
         * @param value the value to campaign with
         * @param task what to run while leading
         * @return the options
         */
        public static Options of(String value, LeaderTask task) {
            return new Options(value, task, new LeadershipListener() {
            }, null, true, Duration.ofMillis(100), Duration.ofSeconds(10));
        }

        /**
         * @param listener told of terms and leader changes
         * @return these options with {@code listener}
         */
        public Options withListener(LeadershipListener listener) {
            return new Options(value, task, Objects.requireNonNull(listener, "listener"), listenerExecutor, requeue,
                    initialBackoff, maxBackoff);
        }

        /**
         * @param executor where the listener runs
         * @return these options with {@code executor}
         */
        public Options withListenerExecutor(Executor executor) {
            return new Options(value, task, listener, Objects.requireNonNull(executor, "executor"), requeue,
                    initialBackoff, maxBackoff);
        }

        /**
         * @param requeue whether to campaign again after the task returned or threw
         * @return these options with {@code requeue}
         */
        public Options withRequeue(boolean requeue) {
            return new Options(value, task, listener, listenerExecutor, requeue, initialBackoff, maxBackoff);
        }

        /**
         * @param initial the first wait before a new session
         * @param max the longest wait
         * @return these options with that backoff
         */
        public Options withBackoff(Duration initial, Duration max) {
            return new Options(value, task, listener, listenerExecutor, requeue, initial, max);
        }
    }
}
