package io.disco.barrier;

import java.time.Duration;

/**
 * A distributed barrier: a gate that one process holds up and any process lowers, while others wait for it to fall
 * ("every worker waits until the migration is done"). Its state is one key in the backend (for etcd: the key
 * {@code name}, as etcd's Go {@code recipe.Barrier} writes it; for ZooKeeper: the node {@code name}, as Curator's
 * {@code DistributedBarrier} writes it), so a Java process and a Go or Curator process meet at the same barrier.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Up or down.</b> {@link #hold()} raises the barrier, {@link #release()} lowers it; both are idempotent
 *       and tell whether they changed anything. Any process may lower a barrier another raised: the barrier has no
 *       owner.</li>
 *   <li><b>It outlives its holder.</b> A raised barrier belongs to no lease: when the process that raised it
 *       stops, pauses past its lease or loses its session, the barrier stays up and the waiters stay blocked,
 *       until some process lowers it (the holder after a restart, any process's {@link #release()}, an operator
 *       deleting its key). A barrier that fell by itself would let every worker start on an unfinished
 *       migration; a barrier that stays up only costs a wait, which the waiters bound with
 *       {@link #await(Duration)}. It is the choice of etcd's and Curator's barriers too, so a barrier means the
 *       same on every backend and in every language.</li>
 *   <li><b>Waiting.</b> {@link #await()} returns once the barrier is down: at once if it is not up. A waiter that
 *       returns saw the barrier down at some moment after it called; the barrier may be up again by then (raised
 *       anew), as with any gate. A wait rides through the loss of the client's owner: it goes on through the
 *       next one.</li>
 *   <li><b>Timeouts and interrupts.</b> {@link #await(Duration)} returns false when the time runs out;
 *       {@link #await()} waits as long as it takes. Both throw {@link InterruptedException} when the thread is
 *       interrupted (on entry or while waiting) and leave nothing behind: a waiter has no key.
 *       {@link #hold()} and {@link #release()} are one request each, bounded by the backend's request timeout,
 *       and not interruptible (the interrupt status is kept).</li>
 *   <li><b>Closing the client.</b> A wait in progress ends with {@link IllegalStateException}; calls after
 *       the close throw it too. A raised barrier stays up: closing a client lowers nothing.</li>
 * </ul>
 * Handles are cheap and thread-safe; they hold no resource.
 */
public interface Barrier {

    /** @return the barrier's name */
    String name();

    /**
     * Raises the barrier, if it is not up.
     *
     * @return true if this call raised it; false if it was up already (raised by anyone)
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time (the barrier may or
     *     may not be up: call again)
     * @throws IllegalStateException if the client is closed
     */
    boolean hold();

    /**
     * Lowers the barrier, if it is up, whoever raised it: the waiters return.
     *
     * @return true if this call lowered it; false if it was not up
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time (call again)
     * @throws IllegalStateException if the client is closed
     */
    boolean release();

    /**
     * Reads whether the barrier is up now; for information only (it may change at once).
     *
     * @return whether the barrier's key is there
     * @throws io.disco.fencing.DiscoException if the backend failed or did not answer in time
     * @throws IllegalStateException if the client is closed
     */
    boolean isHeld();

    /**
     * Waits, as long as it takes, until the barrier is down.
     *
     * @throws InterruptedException if interrupted on entry or while waiting
     * @throws IllegalStateException if the client is closed, before or while waiting
     * @throws io.disco.fencing.DiscoException if the backend failed, or could not be reached for longer than the
     *     client's owner wait
     */
    void await() throws InterruptedException;

    /**
     * Waits at most {@code timeout} until the barrier is down; zero or less only looks.
     *
     * @param timeout the longest wait
     * @return true if the barrier is down; false if it was still up when the time ran out
     * @throws NullPointerException if {@code timeout} is null
     * @throws InterruptedException if interrupted on entry or while waiting
     * @throws IllegalStateException if the client is closed, before or while waiting
     */
    boolean await(Duration timeout) throws InterruptedException;
}
