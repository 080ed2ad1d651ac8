package io.disco.provider.etcd;

import io.disco.core.internal.SessionThread;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session's serial context: the services' state machines run here, one task at a time, in the
 * order submitted (what the provider's documentation calls "the session thread"). A task only runs
 * library code: state moves, requests sent without waiting, futures that no user code follows (user
 * futures complete on the callback executor). Who runs a task, when the context is idle:
 *
 * <ul>
 *   <li>{@link #runHere}: the submitting thread itself, at once (a caller starting an acquisition, a
 *       timer on the worker), unless it is an I/O event loop;</li>
 *   <li>{@link #execute} (and {@link #runHere} from an event loop, where jetcd completes its answers): a
 *       caller blocked in {@link #await} for an answer, woken to run it, else the worker thread.</li>
 * </ul>
 *
 * So a blocking call's request costs the wake-ups jetcd's own blocking call costs (its answer wakes the
 * caller), not two more through the worker. A thread lent to the context counts as a session thread
 * meanwhile ({@link SessionThread#runLent}): user-facing work it hands to the callback executor never
 * runs on it, even with a direct executor, and a blocking call of this library fails fast there. Only
 * threads that hold no lock of this library are lent (a task would run inside it); an event loop never
 * is (every connection's reads and writes and the keepalive answers wait behind whatever runs on it). A
 * lent thread hands the rest to the worker after {@value #BATCH} tasks, so a caller never works off a
 * long queue of other owners' tasks.
 */
final class SessionContext implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(SessionContext.class);

    /** Tasks one thread runs at most before handing the context to the worker. */
    static final int BATCH = 32;

    private final ScheduledThreadPoolExecutor worker;
    private final String session;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Whether a thread runs (or the worker or a helper is about to run) the queued tasks. */
    private final AtomicBoolean running = new AtomicBoolean();
    /** A caller waiting for an answer ({@link #await}) that offers to run the context's tasks, or null. */
    private final AtomicReference<Thread> helper = new AtomicReference<>();

    SessionContext(ScheduledThreadPoolExecutor worker, String session) {
        this.worker = worker;
        this.session = session;
    }

    /**
     * Runs {@code task} in the context, after the tasks before it: an idle context wakes a caller that
     * waits for an answer ({@link #await}) to run it, else the worker; dropped once the session is shut down.
     */
    @Override
    public void execute(Runnable task) {
        submit(task);
    }

    /** {@link #execute}; @return false when the session is shut down and the task was dropped */
    boolean submit(Runnable task) {
        if (!offer(task)) {
            return false;
        }
        if (take()) {
            Thread waiting = helper.get() == null ? null : helper.getAndSet(null);
            if (waiting != null) {
                LockSupport.unpark(waiting); // it owns the context now: it runs the queued tasks
            } else {
                handOff();
            }
        }
        return true;
    }

    /**
     * Waits for {@code f} like {@link CompletableFuture#get(long, TimeUnit)} (forever when
     * {@code timeoutNanos} is negative), offering the calling thread to run the context's tasks
     * meanwhile: the answer a blocking call waits for then wakes that call's thread only, which runs
     * the state machine itself, instead of waking the worker first. One caller at a time is offered;
     * the others wait as {@code get} would. Only from a thread holding no lock of this library.
     */
    <T> T await(CompletableFuture<T> f, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (!f.isDone() && !SessionThread.onSessionThread()) {
            help(f, timeoutNanos);
        }
        return f.get(0, TimeUnit.NANOSECONDS); // done, or the wait's outcome: timed out or interrupted
    }

    private void help(CompletableFuture<?> f, long timeoutNanos) throws InterruptedException {
        Thread me = Thread.currentThread();
        f.whenComplete((v, e) -> LockSupport.unpark(me)); // completed by another thread than this one
        long deadline = System.nanoTime() + timeoutNanos;
        boolean offered = false;
        try {
            while (!f.isDone()) {
                if (!offered) {
                    offered = helper.get() == null && helper.compareAndSet(null, me);
                }
                if (timeoutNanos < 0) {
                    LockSupport.park(f);
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return;
                    }
                    LockSupport.parkNanos(f, left);
                }
                if (offered && helper.get() != me) {
                    offered = false; // taken: this thread owns the context until its tasks are run
                    SessionThread.runLent(this::drain);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } finally {
            if (offered && !helper.compareAndSet(me, null)) {
                SessionThread.runLent(this::drain); // taken just as the wait ended
            }
        }
    }

    /**
     * Runs {@code task} in the context: at once on this thread when the context is idle, else after the
     * tasks before it (on whichever thread runs them). Only from a thread holding no lock of this library.
     *
     * @return false when the session is shut down and the task was dropped
     */
    boolean runHere(Runnable task) {
        if (EVENT_LOOP.get(Thread.currentThread().getClass())) {
            return submit(task); // an I/O event loop is never borrowed
        }
        if (!offer(task)) {
            return false;
        }
        if (take()) {
            SessionThread.runLent(this::drain);
        }
        return true;
    }

    /**
     * Takes the context for the calling thread (or the one it hands it to) when nobody runs it: a read
     * first, since while it runs, as under a burst of answers, every submitter finds it taken.
     */
    private boolean take() {
        return !running.get() && running.compareAndSet(false, true);
    }

    /**
     * Whether a thread of this class is an I/O event loop (Netty's {@code FastThreadLocalThread}, under
     * vert.x, gRPC and their shaded copies): jetcd completes some answers there, and the keepalive
     * answers and every connection's reads and writes wait behind whatever runs on it.
     */
    private static final ClassValue<Boolean> EVENT_LOOP = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                if (c.getName().endsWith(".FastThreadLocalThread")) {
                    return true;
                }
            }
            return false;
        }
    };

    private boolean offer(Runnable task) {
        if (worker.isShutdown()) {
            LOG.debug("session {} is shut down; dropped a task", session);
            return false;
        }
        tasks.add(task);
        return true;
    }

    /** Runs queued tasks while the context is this thread's; at most {@value #BATCH}, then the worker goes on. */
    private void drain() {
        int ran = 0;
        while (true) {
            Runnable task;
            while ((task = tasks.poll()) != null) {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    LOG.error("session {}: a task failed", session, e);
                }
                if (++ran == BATCH) {
                    handOff();
                    return;
                }
            }
            running.set(false);
            if (tasks.isEmpty() || !take()) {
                return;
            }
        }
    }

    /** The worker runs the queued tasks (the context stays taken); once it is shut down, they are dropped. */
    private void handOff() {
        try {
            worker.execute(this::drain);
        } catch (RejectedExecutionException e) {
            LOG.debug("session {} is shut down; dropped {} tasks", session, tasks.size());
            tasks.clear();
            running.set(false);
        }
    }
}
