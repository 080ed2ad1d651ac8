package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A synchronous caller's wait for a {@link QueueClaim}: bounded by the caller's timeout (an acquisition) or the
 * session's request timeout (a try); a wait that ends without the grant gives the attempt up and returns only
 * once its claim is withdrawn, and a grant committed at the instant of the give-up is returned, not lost. It knows
 * the service only as an {@link AttemptOwner}.
 */
final class QueueCaller {

    private QueueCaller() {}

    /** Waits for an acquisition's grant, up to {@code timeout} (null: no limit). */
    static <G extends Fenced> G await(AttemptOwner<G> s, QueueClaim<G> a, Duration timeout)
            throws InterruptedException, TimeoutException {
        Duration request = s.core().requestTimeout();
        try {
            return timeout == null ? a.future.get() : a.future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Optional<G> g = a.giveUp(request);
            if (g.isPresent()) { // committed before the interruption: the caller holds the lock
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
                            ? "the release of this service's previous grant of the " + s.what() + " on " + s.name
                                    + " was still unconfirmed after " + timeout
                                    + " (Redis has not answered it): nothing was claimed"
                            : "the " + s.what() + " on " + s.name + " was still held by another owner after " + timeout
                                    + "; this owner's claim was withdrawn");
            t.initCause(e);
            throw t;
        } catch (ExecutionException e) {
            a.awaitWithdrawn(request);
            throw QueueClaim.rethrow(e.getCause());
        }
    }

    /**
     * Waits for a try's answer (the grant, or empty when somebody is ahead), up to the request timeout. Not
     * interruptible, as {@code tryLock()} is not: one answer is awaited whatever the thread's interrupt status,
     * which is kept.
     */
    static <G extends Fenced> Optional<G> awaitTry(AttemptOwner<G> s, QueueClaim<G> a, String call) {
        Duration request = s.core().requestTimeout();
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
                    s.core().where() + " did not answer " + call + " on " + s.name + " within " + request, e);
        } catch (ExecutionException e) {
            a.awaitWithdrawn(request);
            throw QueueClaim.rethrow(e.getCause());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
