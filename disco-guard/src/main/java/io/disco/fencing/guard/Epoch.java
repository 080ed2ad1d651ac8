package io.disco.fencing.guard;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The admissions of one token in a {@link Guard}'s ordered admission ({@link OrderedAdmission}): the
 * token whose admissions may run now, with how many are open. Every open admission has the current
 * epoch's token; a higher token starts a new epoch (under the mark's lock) only once this one's count
 * is zero.
 *
 * <p>Joining the running epoch ({@link Guard#admit} with a token equal to it) and leaving it
 * ({@link Guard.Admission#close()}) take no lock: the count goes in or out first and the guard's mark
 * is read after, while a higher token raises the mark first and reads the count after, so one of the
 * two sees the other.
 */
final class Epoch {
    final long token;
    final AtomicLong running = new AtomicLong();
    private final GuardMark mark;

    Epoch(GuardMark mark, long token) {
        this.mark = mark;
        this.token = token;
    }

    /** One admission of this token has ended: wakes the waiters when it was the last and one may be waiting. */
    void leave() {
        // Count out first, then look at the mark: a waiter raised the mark before it looked at the count.
        // The mark differs from this epoch's token when a higher one waits, or when it was lowered.
        if (running.decrementAndGet() == 0 && mark.value.get() != token) {
            mark.lock.lock();
            try {
                mark.changed.signalAll();
            } finally {
                mark.lock.unlock();
            }
        }
    }
}
