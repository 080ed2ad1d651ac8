package io.disco.provider.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One wait of a barrier step on Redis (a barrier's fall, a double barrier's opening, the end of a round): a check, one
 * request, run again whenever the name's channel says something changed ({@link Wakeups#observe}: {@code +b},
 * {@code +d}), whenever its subscription is confirmed (again after Lettuce reconnected: whatever was published while
 * it was not subscribed is read then), at the instant the check's answer names (a participant's key expiring: no
 * message is published when a key expires) and at the latest every {@code min(ttl, 5 s)}, for a lost message. A
 * failed check is retried, backing off up to that poll: a wait rides through a Redis it cannot reach, as the
 * session does until it is lost. Checks never overlap (a wake during one runs one more after it) and run on the
 * session's thread; nothing here blocks. The wait ends when a check completes its future; completing or cancelling
 * that future stops the listening and the timer. Once the session's thread is gone (the session ended) the wait
 * fails with {@link IllegalStateException} rather than hang.
 */
final class BarrierWatch {

    /** One check of the wait. */
    @FunctionalInterface
    interface Check {
        /**
         * Sends one request; completes {@code result} when the wait is over.
         *
         * @param result the wait's outcome
         * @return in how many ms the next check is due at the latest (negative: at the poll), or a failure (checked
         *     again after a back-off)
         */
        CompletableFuture<Long> run(CompletableFuture<Void> result);
    }

    private static final Logger LOG = LoggerFactory.getLogger(BarrierWatch.class);
    /** A little past a participant's expiry, so that the server has expired it. */
    private static final long EXPIRY_SLACK_MS = 5;

    private static final long FIRST_BACKOFF_MS = 50;

    private final SessionCore core;
    private final String name;
    private final CompletableFuture<Void> result;
    private final Check check;
    private final long pollMs;
    /** What the name's channel and the timer run: a check, on the session's thread. */
    private final Runnable wake;

    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean pending = new AtomicBoolean();
    private ScheduledFuture<?> timer; // guarded by this
    private long backoffMs = FIRST_BACKOFF_MS; // the checks' (one at a time)

    private BarrierWatch(SessionCore core, String name, CompletableFuture<Void> result, Check check) {
        this.core = core;
        this.name = name;
        this.result = result;
        this.check = check;
        this.pollMs = ClaimWorker.poll(core.ttl()).toMillis();
        this.wake = () -> core.onSessionThread(this::checkNow);
    }

    /**
     * Starts waiting: listens to the name's channel, then checks at once.
     *
     * @param result the wait's outcome, completed by a check; cancel it to stop
     * @return the watch, whose {@link #wake()} asks for a check
     */
    static BarrierWatch start(SessionCore core, String name, CompletableFuture<Void> result, Check check) {
        BarrierWatch w = new BarrierWatch(core, name, result, check);
        try {
            core.wakeups().observe(name, w.wake); // before the check: a change after it is heard
        } catch (RuntimeException e) { // the pub/sub connection is closed: the session ended
            result.completeExceptionally(
                    new IllegalStateException("the Redis session ended before a barrier on " + name + " waited", e));
        }
        result.whenComplete((v, e) -> w.stop());
        w.wake.run();
        return w;
    }

    /** Asks for a check (something may have changed): at once, or right after the one under way. */
    void wake() {
        wake.run();
    }

    private void checkNow() {
        pending.set(true);
        if (result.isDone() || !running.compareAndSet(false, true)) {
            return;
        }
        pending.set(false);
        CompletableFuture<Long> answer;
        try {
            answer = check.run(result);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((ms, e) -> core.onSessionThread(() -> answered(ms, e)));
    }

    private void answered(Long ms, Throwable e) {
        if (!result.isDone()) {
            long next;
            if (e != null) {
                next = backoffMs;
                backoffMs = Math.min(pollMs, backoffMs * 2);
                LOG.debug("a barrier wait on {} failed to check, again in {} ms: {}", name, next, e.toString());
            } else {
                backoffMs = FIRST_BACKOFF_MS;
                next = ms != null && ms >= 0 ? Math.min(pollMs, ms + EXPIRY_SLACK_MS) : pollMs;
            }
            rearm(next);
        }
        running.set(false);
        if (pending.get() && !result.isDone()) {
            checkNow();
        }
    }

    private synchronized void rearm(long delayMs) {
        if (timer != null) {
            timer.cancel(false);
        }
        if (result.isDone()) {
            return;
        }
        try {
            timer = core.schedule(wake, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(
                    new IllegalStateException("the Redis session ended while a barrier on " + name + " waited", e));
        }
    }

    private void stop() {
        try {
            core.wakeups().unobserve(name, wake);
        } catch (RuntimeException e) {
            // the pub/sub connection is closed: nothing to unsubscribe
        }
        synchronized (this) {
            if (timer != null) {
                timer.cancel(false);
            }
        }
    }
}
