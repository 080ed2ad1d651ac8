package io.disco.fencing;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Tells a claim's failure from the loss of its lease, for front ends that claim through a service of the
 * moment and claim again after a loss (the client's locks and read/write locks). A claim sent between the
 * loss of a lease and the service noticing it fails with a backend error (for etcd: "lease not found", after
 * a revoke) rather than with the primitive's lost exception; the service reports the loss soon after. Such a
 * front end waits a little for that report, and on it treats the failure as the loss (claims again through
 * the next service) instead of failing the acquisition. Applications do not need it.
 */
public final class LossGrace {

    /** How long a claim's failure may wait to turn out to be the loss of the lease. */
    public static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private LossGrace() {
    }

    /**
     * Whether {@code service} reports a loss within {@link #GRACE_NANOS}, or {@code maxWaitNanos} if sooner:
     * waits for its {@code done()}, then asks its {@code err()}.
     *
     * @param service the service the failed claim was made through
     * @param maxWaitNanos the longest wait the caller allows (its deadline); 0 or less: no wait, only the check
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not, the
     *                      wait ends and the thread's interrupt status is kept
     * @return whether the service has lost its lease
     * @throws InterruptedException if {@code interruptible} and the thread was interrupted while waiting
     */
    public static boolean lostMeanwhile(DiscoService<?, ?> service, long maxWaitNanos, boolean interruptible)
            throws InterruptedException {
        long grace = Math.min(GRACE_NANOS, maxWaitNanos);
        if (grace > 0) {
            try {
                service.done().toCompletableFuture().get(grace, TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // not finished: the failure stands
            } catch (InterruptedException e) {
                if (interruptible) {
                    throw e;
                }
                Thread.currentThread().interrupt();
            }
        }
        return service.err().isPresent();
    }
}
