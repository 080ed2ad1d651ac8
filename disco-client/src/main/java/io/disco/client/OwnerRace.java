package io.disco.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * A barrier step's wait against the end of the owner it runs through: whichever comes first. The one place where a
 * barrier's wait is cut short (the owner lost or closed, the deadline, an interrupt) and its backend wait stopped.
 */
final class OwnerRace {

    private OwnerRace() {}

    /**
     * Waits until {@code step} completes or {@code owner} ends, at most until {@code deadline}, interruptibly. The step
     * is cancelled (its watch stopped) whenever this returns without it.
     *
     * @return true if the step completed normally; false if the owner ended first
     * @throws TimeoutException if the deadline passed first
     * @throws InterruptedException if interrupted first
     * @throws RuntimeException the step's failure
     */
    static boolean await(CompletableFuture<?> step, DiscoBackend.Owner owner, long deadline)
            throws InterruptedException, TimeoutException {
        CompletableFuture<Object> first =
                CompletableFuture.anyOf(step, owner.done().toCompletableFuture());
        boolean done = false;
        try {
            Wait.INTERRUPTIBLY.await(first, deadline);
            if (step.isDone()) {
                Wait.UNINTERRUPTIBLY.await(step, Long.MAX_VALUE); // throws its failure
                done = true;
            }
            return done;
        } finally {
            if (!done) {
                step.cancel(false);
            }
        }
    }
}
