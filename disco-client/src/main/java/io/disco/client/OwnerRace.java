package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Timeouts;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A barrier step's wait against the end of the owner it runs through: whichever comes first. The one place where a
 * barrier's wait is cut short (the owner lost or closed, the deadline, an interrupt) and its backend wait stopped.
 */
final class OwnerRace {

    private OwnerRace() {}

    /**
     * @param timeout a barrier call's timeout
     * @return its deadline on {@code System.nanoTime()}: {@link Long#MAX_VALUE} (none) for a timeout too long to count
     *     in nanoseconds, now for zero or less
     * @throws NullPointerException if {@code timeout} is null
     */
    static long deadline(Duration timeout) {
        long nanos = Timeouts.nanos(timeout);
        return nanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + nanos;
    }

    /**
     * Waits until {@code step} completes or {@code owner} ends, at most until {@code deadline}, interruptibly. The step
     * is cancelled (its watch stopped) whenever this returns without it.
     *
     * @return true if the step completed normally; false if the owner ended first, or the step failed with a backend
     *     error and the owner ended within the grace
     * @throws TimeoutException if the deadline passed first
     * @throws InterruptedException if interrupted first
     * @throws RuntimeException the step's failure
     */
    static boolean await(CompletableFuture<?> step, DiscoBackend.Owner owner, long deadline)
            throws InterruptedException, TimeoutException {
        CompletableFuture<Void> ended = owner.done().toCompletableFuture();
        CompletableFuture<Object> first = CompletableFuture.anyOf(step, ended);
        boolean done = false;
        try {
            try {
                Wait.INTERRUPTIBLY.await(first, deadline);
                if (step.isDone()) {
                    Wait.UNINTERRUPTIBLY.await(step, Long.MAX_VALUE); // throws its failure
                    done = true;
                }
            } catch (DiscoException failed) {
                if (!endsWithin(ended, deadline)) {
                    throw failed;
                }
            }
            return done;
        } finally {
            if (!done) {
                step.cancel(false);
            }
        }
    }

    /**
     * Whether the owner ends within {@link SelfHealingClaim#LOSS_GRACE_NANOS} (at most until the deadline): a backend
     * failure of a step (for etcd: the session finished under a request) is taken for the owner's end if the owner
     * reports it within the grace, as an acquisition's is.
     */
    private static boolean endsWithin(CompletableFuture<Void> ended, long deadline) throws InterruptedException {
        long grace = deadline == Long.MAX_VALUE
                ? SelfHealingClaim.LOSS_GRACE_NANOS
                : Math.min(SelfHealingClaim.LOSS_GRACE_NANOS, deadline - System.nanoTime());
        try {
            ended.get(Math.max(0, grace), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException | ExecutionException e) {
            return ended.isDone();
        }
    }
}
