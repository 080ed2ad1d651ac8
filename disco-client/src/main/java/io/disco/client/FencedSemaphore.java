package io.disco.client;

import io.disco.fencing.Held;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * A distributed counting semaphore by name ({@link Disco#semaphore(String, int)}): at most
 * {@link #permits()} permits held at a time across every process, any number of them by the threads of
 * this one, all through the client's one owner (for etcd: one lease).
 *
 * <ul>
 *   <li><b>Permits, not threads.</b> Every acquisition takes one permit and returns its {@link Permit};
 *       a permit is not owned by a thread (as with {@link java.util.concurrent.Semaphore}): any thread
 *       may {@link #release(Permit)} it, once. Each permit is its own claim in the backend (for etcd:
 *       its own holder key), so the permits held by this process count one each against the limit,
 *       for other processes too, and holders are admitted in the order they asked.</li>
 *   <li><b>Fencing per slot.</b> Each held permit has a slot in {@code 0 .. permits-1} that no other
 *       current holder has, and a token strictly greater than that of every earlier holder of that
 *       slot, in any process; guard a resource per slot with {@link Permit#guardKey()}.</li>
 *   <li><b>One limit per name.</b> Every holder of a name, in every process, must use the same number of
 *       permits; the backend records the first one (for etcd: the non-leased key
 *       {@code disco-semaphore-limit:<name>}, the one key a name keeps when idle). An acquisition with
 *       another limit fails with {@link IllegalArgumentException} and changes nothing.</li>
 *   <li><b>Giving up</b> (a timeout, an interruption, {@link #tryAcquire()} finding no free permit,
 *       cancelling {@link #acquireAsync()}) withdraws the claim: no key is left behind.</li>
 *   <li><b>Loss.</b> When the client's owner is lost, every permit held through it is lost:
 *       {@link #done(Permit)} completes, {@link #err(Permit)} holds a {@link SemaphoreLostException}, and
 *       {@link #release(Permit)} throws it (the permit is then forgotten). A resource's guard rejects the
 *       permit's token once its slot is given to a newer holder. An acquisition that was waiting at the
 *       moment of loss held nothing: it claims again through the client's new owner, within its own
 *       timeout; later acquisitions get permits from the new owner, with higher tokens per slot.</li>
 *   <li><b>One permit per call.</b> There is no {@code acquire(n)}. Taking {@code n} permits one after
 *       another while holding the first ones can deadlock: two callers that each hold part of what they
 *       need, with the limit used up between them, wait for each other for ever. Taking them at once
 *       would need the {@code n} claims made in one backend transaction and admitted together (for etcd:
 *       {@code n} keys with one CreateRevision, admitted only when all fit), which the one-key acquire
 *       machine shared by every primitive does not do; and each of the {@code n} permits would still need
 *       its own slot and token. To take several, take them one by one under a {@link io.disco.lock.FencedLock} of your
 *       own that every multi-permit taker of the name holds while taking, so that at most one caller is
 *       ever part-way through.</li>
 *   <li>Futures complete off the backend's threads that keep the owner alive.</li>
 * </ul>
 *
 * <p>The handle holds no resource: a name with no permit held and no acquisition waiting keeps nothing
 * in the client and no key in the backend but the limit record.
 */
public interface FencedSemaphore {

    /** @return the semaphore's name */
    String name();

    /** @return how many permits the semaphore has: its limit, the same in every process */
    int permits();

    /**
     * Acquires a permit, waiting as long as it takes.
     *
     * @return the permit
     * @throws InterruptedException if interrupted on entry (nothing is claimed, and no limit is recorded) or while
     *     waiting (the claim is withdrawn)
     * @throws IllegalArgumentException if the name's recorded limit is not {@link #permits()}
     * @throws IllegalStateException if the client is closed, or the name is in use as another primitive
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     */
    Permit acquire() throws InterruptedException;

    /**
     * Acquires a permit, waiting at most {@code timeout}: zero or less takes one only if one is free now (one try,
     * as {@link #tryAcquire()}), and a timeout too long to count in nanoseconds waits without a limit (the rule of
     * {@link io.disco.fencing.Timeouts}).
     *
     * @param timeout the longest wait; zero or less: only if a permit is free now
     * @return the permit
     * @throws NullPointerException if {@code timeout} is null (to wait without a limit, call {@link #acquire()})
     * @throws IllegalArgumentException if the name's recorded limit is not {@link #permits()}
     * @throws TimeoutException if no permit came in time; the claim is withdrawn
     * @throws InterruptedException if interrupted on entry (nothing is claimed, and no limit is recorded) or while
     *     waiting (the claim is withdrawn)
     */
    Permit acquire(Duration timeout) throws InterruptedException, TimeoutException;

    /**
     * Acquires a permit only if one is free now (fewer than {@link #permits()} holders, counting the
     * waiters that asked first).
     *
     * @return the permit, or empty (the claim withdrawn)
     */
    Optional<Permit> tryAcquire();

    /**
     * Starts an acquisition without blocking. Cancelling the future withdraws the claim; if the permit
     * was granted at that very instant, it is released at once.
     *
     * @return the pending acquisition; its dependent stages run off the backend's threads
     */
    CompletableFuture<Permit> acquireAsync();

    /**
     * Releases {@code permit}: deletes its claim and its slot in the backend.
     *
     * @param permit a permit acquired through this client and not released yet
     * @throws NullPointerException if {@code permit} is null
     * @throws IllegalArgumentException if {@code permit} is not held through this client on this name
     *     (released already, or acquired elsewhere)
     * @throws SemaphoreLostException if the permit was lost before this call; it is forgotten
     * @throws io.disco.fencing.DiscoException if the backend refused the release (the permit is still held,
     *     retry) or did not answer in time (the permit is given up: the release goes on in the background,
     *     and its slot is not handed out again before it is confirmed). Not interruptible: the interrupt
     *     status is kept.
     */
    void release(Permit permit);

    /**
     * Completes, normally, when {@code permit}'s hold ends: it was released, or lost ({@link #err(Permit)}
     * then tells).
     *
     * @param permit a permit held through this client
     * @return the end of the hold
     * @throws IllegalArgumentException if {@code permit} is not held through this client on this name
     */
    CompletionStage<Void> done(Permit permit);

    /**
     * @param permit a permit held through this client
     * @return its loss, or empty while it is valid
     * @throws IllegalArgumentException if {@code permit} is not held through this client on this name
     */
    Optional<SemaphoreLostException> err(Permit permit);

    /**
     * Acquires a permit for one critical section, waiting at most {@code timeout}: closing the returned
     * hold releases that permit (from any thread).
     *
     * @param timeout the longest wait; zero or less: only if a permit is free now (see {@link #acquire(Duration)})
     * @return the held permit
     * @throws TimeoutException if no permit came in time; the claim is withdrawn
     * @throws InterruptedException if interrupted on entry or while waiting; the claim is withdrawn
     */
    default Held<Permit> hold(Duration timeout) throws InterruptedException, TimeoutException {
        Objects.requireNonNull(timeout, "timeout");
        Permit permit = acquire(timeout);
        return Held.of(permit, () -> release(permit));
    }
}
