package io.disco.shedlock;

import io.disco.fencing.FencingToken;
import java.util.Optional;

/**
 * The fencing token of the run the current thread is in: what a {@code @SchedulerLock} method (or a task
 * run by {@code LockingTaskExecutor}) sends with every write to the resource its lock protects, for the
 * resource to reject a lower token than one it has accepted (disco's guard, or a token column with
 * {@code disco-jdbc}). ShedLock's {@code LockAssert} tells whether a lock is held; this tells which hold.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @SchedulerLock(name = "report", lockAtMostFor = "PT5M")
 * void report() {
 *     FencingToken token = SchedulerLockToken.current();
 *     reports.write(build(), token); // rejected if a newer run has written: this one overran or was cut off
 * }
 * }</pre>
 *
 * <ul>
 *   <li>The run is the innermost one that the current thread entered through a {@link DiscoLockProvider}
 *       (directly or wrapped, for example by {@code KeepAliveLockProvider}) and has not unlocked; ShedLock
 *       locks and unlocks on the task's thread, so call it there, not from a thread the task started
 *       (read the token first and hand it over).</li>
 *   <li>Every run's token is strictly greater than every earlier run's of the same lock name, in any
 *       instance. An extension ({@code LockExtender}, {@code KeepAliveLockProvider}) keeps the token.</li>
 * </ul>
 */
public final class SchedulerLockToken {

    private SchedulerLockToken() {}

    /**
     * The token of the current thread's run.
     *
     * @return the token
     * @throws IllegalStateException if the current thread is in no run locked by a {@link DiscoLockProvider}
     * @throws io.disco.lock.LockLostException if the run's hold ended under it: held past its
     *         {@code lockAtMostFor} (released, so another instance may run), or lost with the client's lease;
     *         the token is stale, a fenced resource rejects it once a newer run has written
     */
    public static FencingToken current() {
        return RunHolds.current()
                .orElseThrow(() -> new IllegalStateException(
                        "this thread is in no run locked by a DiscoLockProvider: call it from a @SchedulerLock method's"
                                + " thread, while it runs"))
                .token();
    }

    /**
     * Like {@link #current()}, without throwing: the token of the current thread's run if it is in one and
     * its hold has not ended under it.
     *
     * @return the token, or empty
     */
    public static Optional<FencingToken> find() {
        return RunHolds.current().filter(hold -> hold.err().isEmpty()).map(ShedHold::token);
    }
}
