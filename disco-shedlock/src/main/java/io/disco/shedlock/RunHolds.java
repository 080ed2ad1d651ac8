package io.disco.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The holds of the runs the current thread is in, innermost last: pushed when
 * {@link DiscoLockProvider#lock} acquires on a thread, removed by the run's unlock (ShedLock locks and
 * unlocks on the task's thread).
 */
final class RunHolds {

    private static final ThreadLocal<Deque<ShedHold>> HOLDS = ThreadLocal.withInitial(ArrayDeque::new);

    private RunHolds() {}

    static void enter(ShedHold hold) {
        HOLDS.get().addLast(hold);
    }

    /** Removes {@code hold} if this thread entered it (an unlock from another thread finds nothing here). */
    static void leave(ShedHold hold) {
        Deque<ShedHold> holds = HOLDS.get();
        holds.removeLastOccurrence(hold);
        if (holds.isEmpty()) {
            HOLDS.remove();
        }
    }

    /** @return the innermost hold of this thread's runs */
    static Optional<ShedHold> current() {
        Deque<ShedHold> holds = HOLDS.get();
        ShedHold hold = holds.peekLast();
        if (hold == null) {
            HOLDS.remove();
        }
        return Optional.ofNullable(hold);
    }
}
