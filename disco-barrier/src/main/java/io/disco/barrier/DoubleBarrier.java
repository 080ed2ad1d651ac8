package io.disco.barrier;

import java.time.Duration;

/**
 * One participant of a distributed double barrier for a fixed number of participants: {@link #enter()} blocks until
 * that many have entered, {@link #leave()} until all of them have left ("start the batch when three instances are
 * ready, finish together"). Each participant is a key on the client's owner (for etcd: a key under
 * {@code name/waiters/} on the client's lease, as etcd's Go {@code recipe.DoubleBarrier} writes them; for ZooKeeper:
 * an ephemeral node under {@code name}, as Curator's {@code DistributedDoubleBarrier} writes them), so Java, Go and
 * Curator participants meet at the same barrier.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Enter.</b> {@link #enter()} registers this participant and returns once {@link #participants()} are
 *       registered at the same time (the barrier opens: the one that completes the count marks it open for all).
 *       Nobody passes before that many entered. A participant that arrives while more than
 *       {@link #participants()} are registered (a previous round still leaving) is refused with
 *       {@link IllegalStateException} and leaves no key.</li>
 *   <li><b>Leave.</b> {@link #leave()} removes this participant and returns once no participant is left: nobody
 *       returns from {@code leave()} while another participant of the round has not left, unless it is told of a
 *       loss.</li>
 *   <li><b>A participant that dies</b> (its process stops, its lease expires) counts as left once its key is gone,
 *       one lease TTL at most: before the barrier opened, the others wait for one more participant; after it
 *       opened, the others' {@code leave()} does not wait for it. Its own blocked call, if the process still runs,
 *       fails with {@link BarrierLostException}: it is no longer counted, and the handle is back outside.</li>
 *   <li><b>Timeouts.</b> {@link #enter(Duration)} that runs out withdraws this participant (no key is left) and
 *       returns false, unless the barrier opened first (then it returns true, entered). A participant withdrawn at
 *       the very moment the last one arrived may have been counted by the others: they pass, it does not.
 *       {@link #leave(Duration)} that runs out returns false with this participant left (its key removed, in the
 *       background if the backend is slow to answer): only the wait for the others was cut short. A {@code leave} that
 *       fails (the backend unreachable) also removes the key in the background, and the handle is outside.</li>
 *   <li><b>Interrupts</b> on entry change nothing; while waiting they withdraw (entering) or leave (leaving), as a
 *       timeout does, and throw {@link InterruptedException}.</li>
 *   <li><b>One participant per handle.</b> The handle is outside, entering, inside or leaving ({@link #state()});
 *       {@code enter} is for a handle outside, {@code leave} for one inside, anything else throws
 *       {@link IllegalStateException}. After leaving, the handle may enter again (a new round). A process with
 *       several participants asks the client for several handles.</li>
 *   <li><b>Closing the client</b> ends a blocked call with {@link IllegalStateException}, and removes the
 *       participant's key with the client's owner.</li>
 * </ul>
 * Thread-safe.
 */
public interface DoubleBarrier {

    /** Where this participant is. */
    enum State {
        /** Not registered: may {@link #enter()}. */
        OUTSIDE,
        /** Registered, waiting for the others to enter. */
        ENTERING,
        /** Passed the barrier: may {@link #leave()}. */
        INSIDE,
        /** Removed, waiting for the others to leave. */
        LEAVING
    }

    /** @return the barrier's name */
    String name();

    /** @return how many participants the barrier waits for */
    int participants();

    /** @return where this participant is now */
    State state();

    /**
     * Enters and waits, as long as it takes, until {@link #participants()} have entered.
     *
     * @throws InterruptedException if interrupted on entry (nothing registered) or while waiting (withdrawn)
     * @throws BarrierLostException if the client's owner was lost while waiting (this participant is no longer
     *     counted)
     * @throws IllegalStateException if the handle is not outside, more than {@link #participants()} are registered,
     *     or the client is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or could not be reached in time
     */
    void enter() throws InterruptedException;

    /**
     * Enters and waits at most {@code timeout} until {@link #participants()} have entered.
     *
     * @param timeout the longest wait; zero or less does not wait: the participant registers and is withdrawn at once
     *     unless the barrier opened by then (rarely useful)
     * @return true if the barrier opened; false if the time ran out first (withdrawn, no key left)
     * @throws NullPointerException if {@code timeout} is null
     * @throws InterruptedException if interrupted on entry (nothing registered) or while waiting (withdrawn)
     * @throws BarrierLostException if the client's owner was lost while waiting
     * @throws IllegalStateException if the handle is not outside, more than {@link #participants()} are registered,
     *     or the client is closed
     */
    boolean enter(Duration timeout) throws InterruptedException;

    /**
     * Leaves and waits, as long as it takes, until every participant has left.
     *
     * @throws InterruptedException if interrupted on entry (still inside) or while waiting (left, without waiting
     *     for the others)
     * @throws BarrierLostException if the client's owner was lost before this participant left
     * @throws IllegalStateException if the handle is not inside, or the client is closed
     * @throws io.disco.fencing.DiscoException if the backend failed or could not be reached in time
     */
    void leave() throws InterruptedException;

    /**
     * Leaves and waits at most {@code timeout} until every participant has left.
     *
     * @param timeout the longest wait for the others; zero or less: leaves without waiting for them
     * @return true if every participant has left; false if some had not when the time ran out (this one has)
     * @throws NullPointerException if {@code timeout} is null
     * @throws InterruptedException if interrupted on entry (still inside) or while waiting (left)
     * @throws BarrierLostException if the client's owner was lost before this participant left
     * @throws IllegalStateException if the handle is not inside, or the client is closed
     */
    boolean leave(Duration timeout) throws InterruptedException;
}
