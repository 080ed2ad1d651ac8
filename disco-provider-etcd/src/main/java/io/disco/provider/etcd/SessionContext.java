package io.disco.provider.etcd;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a session's services run their state machines: one task at a time, in the order submitted,
 * each seeing everything the tasks before it did (the "session thread" of the rest of the provider
 * is this context, not one thread).
 *
 * <p>{@link #execute} queues a task for the session's own thread. {@link #runHere} runs the task
 * on the calling thread when the context is idle, which saves the hand-off to the session thread and
 * back (a thread wake-up each way, ~45 µs on a loaded 2-core machine): the caller sending its create
 * Txn, the jetcd thread delivering an answer or a watch event. It still queues when the context is
 * busy, and when the caller is inside a task already (a task submitted by a task runs after it,
 * never inside it). The caller runs its own task, the tasks queued before it, and the follow-ups its
 * task queued (with what was queued in between), at most {@value #BATCH} tasks; the rest of the
 * backlog it hands to the session thread.
 *
 * <p>No user code runs in this context: while a task runs here, {@link #inside()} is true, and
 * {@link EtcdSession#deliver} and the blocking calls treat the thread as a session thread. Lease
 * renewal and expiry detection run on the session's lease thread, never here, so a caller that is
 * descheduled while running a task delays the services, not the lease.
 *
 * <p>{@link #runHere} must be called holding no lock: a task may take a service's lock.
 */
final class SessionContext implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(SessionContext.class);
    /** Tasks run per turn of the session thread before it lets its timers run, and at most by a caller. */
    private static final int BATCH = 64;
    private static final ThreadLocal<SessionContext> INSIDE = new ThreadLocal<>();

    private final Executor thread;
    private final String name;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Whether a thread runs (or is about to run) this context's tasks; the queue is empty while it is false, but for a moment. */
    private final AtomicBoolean running = new AtomicBoolean();
    private final Runnable drain = this::drain;
    private volatile boolean shutDown;
    /** The last task queued by a task of this context; only the running thread touches it. */
    private Runnable lastQueuedInside;

    /**
     * @param thread the session's own thread, which runs what callers do not
     * @param name for the logs
     */
    SessionContext(Executor thread, String name) {
        this.thread = thread;
        this.name = name;
    }

    /** Whether the calling thread is running a task of some session's context. */
    static boolean inside() {
        return INSIDE.get() != null;
    }

    /** Queues {@code task} for the session thread; dropped once the context is shut down. */
    @Override
    public void execute(Runnable task) {
        if (shutDown) {
            dropped();
            return;
        }
        tasks.add(task);
        if (INSIDE.get() == this) {
            lastQueuedInside = task;
        } else if (running.compareAndSet(false, true)) {
            handOff();
        }
    }

    /**
     * Runs {@code task} now, on this thread, if the context is idle and this thread is not inside a
     * task already; queues it otherwise (see the class comment). Call it holding no lock. What the
     * task queues in turn (its follow-ups, behind whatever was queued before them) runs here too, up
     * to {@value #BATCH} tasks in all: handing it to the session thread would cost a wake-up.
     */
    void runHere(Runnable task) {
        if (shutDown) {
            dropped();
            return;
        }
        if (INSIDE.get() != null) {
            execute(task);
            return;
        }
        tasks.add(task);
        if (!running.compareAndSet(false, true)) {
            return; // the running thread runs it
        }
        INSIDE.set(this);
        lastQueuedInside = null;
        try {
            Runnable until = task;
            for (int n = 0; n < BATCH; n++) {
                Runnable t = tasks.poll(); // tasks queued before this one, by callers that lost the race, come first
                if (t == null) {
                    break; // a drainer that has just let go ran it already
                }
                run(t);
                if (t == until) {
                    until = lastQueuedInside; // the follow-ups queued so far
                    lastQueuedInside = null;
                    if (until == null) {
                        break;
                    }
                }
            }
        } finally {
            lastQueuedInside = null;
            INSIDE.remove();
        }
        if (tasks.isEmpty()) {
            letGo();
        } else {
            handOff();
        }
    }

    /** Drops every task submitted from now on (the session thread is shut down). */
    void shutDown() {
        shutDown = true;
    }

    private void drain() {
        INSIDE.set(this);
        try {
            lastQueuedInside = null;
            for (int i = 0; i < BATCH; i++) {
                Runnable t = tasks.poll();
                if (t == null) {
                    break;
                }
                run(t);
            }
        } finally {
            lastQueuedInside = null;
            INSIDE.remove();
        }
        if (tasks.isEmpty()) {
            letGo();
        } else {
            handOff();
        }
    }

    /** Called by the running thread when it found the queue empty: idle, unless a task arrived meanwhile. */
    private void letGo() {
        running.set(false);
        if (!tasks.isEmpty() && running.compareAndSet(false, true)) {
            handOff();
        }
    }

    /** The caller is the running thread: the session thread takes over. */
    private void handOff() {
        try {
            thread.execute(drain);
        } catch (RejectedExecutionException e) {
            tasks.clear();
            running.set(false);
            dropped();
        }
    }

    private void run(Runnable task) {
        try {
            task.run();
        } catch (RuntimeException | Error e) {
            LOG.error("a task of {} failed", name, e);
        }
    }

    private void dropped() {
        LOG.debug("{} is shut down; dropped a task", name);
    }
}
