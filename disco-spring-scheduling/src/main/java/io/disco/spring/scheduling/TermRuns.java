package io.disco.spring.scheduling;

import io.disco.election.LeaderTerm;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The leader-only calls running in one term: a call enters only while the term is active; the term's end
 * interrupts the threads of the calls in progress, and waits until they have left.
 */
final class TermRuns {

    final LeaderTerm term;
    private final Object monitor = new Object();
    /** Guarded by {@link #monitor}: a thread once per call it is in. */
    private final List<Thread> running = new ArrayList<>();
    /** Guarded by {@link #monitor}: the threads this term's end interrupted. */
    private final Set<Thread> interrupted = new HashSet<>();

    private boolean ended;

    TermRuns(LeaderTerm term) {
        this.term = term;
    }

    /** @return whether the current thread may run the call in this term (then it must {@link #leave()}) */
    boolean enter() {
        synchronized (monitor) {
            if (ended || !term.isActive()) {
                return false;
            }
            running.add(Thread.currentThread());
            return true;
        }
    }

    void leave() {
        Thread me = Thread.currentThread();
        synchronized (monitor) {
            running.remove(me);
            if (!running.contains(me) && interrupted.remove(me)) {
                Thread.interrupted(); // this term's interrupt is for this call only, not the thread's next task
            }
            monitor.notifyAll();
        }
    }

    /** The term ended: no call enters from now on, and those in progress are interrupted. */
    void end() {
        synchronized (monitor) {
            ended = true;
            for (Thread t : running) {
                if (interrupted.add(t)) {
                    t.interrupt();
                }
            }
        }
    }

    /** Waits, ignoring interruption (the flag is kept), until every call in progress has left. */
    void awaitIdle() {
        boolean wasInterrupted = false;
        synchronized (monitor) {
            while (!running.isEmpty()) {
                try {
                    monitor.wait();
                } catch (InterruptedException e) {
                    wasInterrupted = true;
                }
            }
        }
        if (wasInterrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
