package io.disco.core.internal;

import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The threads of every session of every provider (its lease timer, its services' worker), and the
 * rules that keep user code off them: no user code may run, and no blocking call of this library may
 * wait, on one. For providers; applications have no use for it.
 */
public final class SessionThread extends Thread {

    private SessionThread(Runnable r, String name) {
        super(r, name);
        setDaemon(true);
    }

    /**
     * A single-threaded scheduler on one daemon session thread; a cancelled task leaves its queue at once.
     *
     * @param name the thread's name, for example {@code disco-lease-<lease id in hex>}
     * @return the scheduler; its owner shuts it down
     */
    public static ScheduledThreadPoolExecutor newExecutor(String name) {
        ScheduledThreadPoolExecutor exec = new ScheduledThreadPoolExecutor(1, r -> new SessionThread(r, name));
        exec.setRemoveOnCancelPolicy(true);
        return exec;
    }

    /** Set while a thread runs a session's work lent to it (see {@link #runLent}). */
    private static final ThreadLocal<Boolean> LENT = new ThreadLocal<>();

    /** @return whether the calling thread is a session thread, or runs a session's work at this moment ({@link #runLent}) */
    public static boolean onSessionThread() {
        return Thread.currentThread() instanceof SessionThread || LENT.get() != null;
    }

    /**
     * Runs a session's work on the calling thread: a provider's serial context may run its state
     * machines on the thread that sends a request or hands over an answer, instead of waking its own.
     * While {@code work} runs, the thread counts as a session thread: user-facing work is delivered
     * elsewhere ({@link Callbacks#deliver}) and a blocking call of this library fails fast. Reentrant.
     *
     * @param work the session's work; it must not block
     */
    public static void runLent(Runnable work) {
        if (LENT.get() != null) {
            work.run();
            return;
        }
        LENT.set(Boolean.TRUE);
        try {
            work.run();
        } finally {
            LENT.remove();
        }
    }

    /**
     * Fails fast where a blocking call would stall (or deadlock) the lease or the services: on a
     * session thread.
     *
     * @param call the call, for the message, for example {@code lock.lock()}
     * @throws IllegalStateException if the calling thread is a session thread
     */
    public static void refuseOnSessionThread(String call) {
        if (onSessionThread()) {
            throw new IllegalStateException(call + " was called on disco's internal thread "
                    + Thread.currentThread().getName()
                    + ", where it would block the lease or wait for itself; call it from another thread");
        }
    }
}
