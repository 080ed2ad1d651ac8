package io.disco.core.internal.grant;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A synchronous caller's wait for a {@link WorkedAcquisition}: bounded by the caller's timeout (an acquisition) or
 * the request timeout (a try); a wait that ends without the grant gives the attempt up and returns only once its
 * claim is withdrawn (or the request timeout passed), and a grant handed over at the instant of the give-up is
 * returned, not lost. It knows the service only as a {@link Service}.
 */
public final class CallerWait {

    /** What a caller's wait needs of the service it acquires from. */
    public interface Service {

        /** @return the service in messages, for example {@code the lock on /locks/orders} */
        String subject();

        /** @return the backend in messages, for example {@code Redis at redis://10.0.0.5:6379} */
        String backend();

        /** @return how long one request may take */
        Duration requestTimeout();

        /** @return whether the release of the service's previous grant is unconfirmed */
        boolean releaseUnconfirmed();
    }

    private CallerWait() {}

    /**
     * Waits for an acquisition's grant, up to {@code timeout}.
     *
     * @param <G> the grant
     * @param s the service
     * @param a the acquisition
     * @param timeout the caller's timeout; null: no limit
     * @return the grant
     * @throws InterruptedException if interrupted before the grant was handed over; the claim is withdrawn
     * @throws TimeoutException if not granted in time; the claim is withdrawn
     */
    public static <G> G await(Service s, WorkedAcquisition<G> a, Duration timeout)
            throws InterruptedException, TimeoutException {
        Duration request = s.requestTimeout();
        try {
            return timeout == null ? a.future.get() : a.future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Optional<G> g = a.giveUp(request);
            if (g.isPresent()) { // handed over before the interruption: the caller holds the grant
                Thread.currentThread().interrupt();
                return g.get();
            }
            throw e;
        } catch (TimeoutException e) {
            Optional<G> g = a.giveUp(request);
            if (g.isPresent()) {
                return g.get();
            }
            TimeoutException t = new TimeoutException(
                    s.releaseUnconfirmed()
                            ? "the release of this service's previous grant of " + s.subject()
                                    + " was still unconfirmed after " + timeout + " (" + s.backend()
                                    + " has not answered it): nothing was claimed"
                            : s.subject() + " was still held by another owner after " + timeout
                                    + "; this owner's claim was withdrawn");
            t.initCause(e);
            throw t;
        } catch (ExecutionException e) {
            a.awaitWithdrawn(request);
            throw WorkedAcquisition.rethrow(e.getCause());
        }
    }

    /**
     * Waits for a try's answer (the grant, or empty when somebody is ahead), up to the request timeout. Not
     * interruptible, as {@code tryLock()} is not: one answer is awaited whatever the thread's interrupt status, which
     * is kept.
     *
     * @param <G> the grant
     * @param s the service
     * @param a the acquisition, one try
     * @param call the call, for the message when the backend did not answer
     * @return the grant, or empty
     * @throws DiscoException if the backend did not answer within the request timeout
     */
    public static <G> Optional<G> awaitTry(Service s, WorkedAcquisition<G> a, String call) {
        Duration request = s.requestTimeout();
        boolean interrupted = false;
        long deadline = System.nanoTime() + request.toNanos();
        try {
            G g;
            while (true) {
                try {
                    g = a.future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            a.awaitWithdrawn(request);
            return Optional.ofNullable(g);
        } catch (TimeoutException e) {
            Optional<G> g = a.giveUp(request);
            if (g.isPresent()) {
                return g;
            }
            throw new DiscoException(
                    s.backend() + " did not answer " + call + " on " + s.subject() + " within " + request, e);
        } catch (ExecutionException e) {
            a.awaitWithdrawn(request);
            throw WorkedAcquisition.rethrow(e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
