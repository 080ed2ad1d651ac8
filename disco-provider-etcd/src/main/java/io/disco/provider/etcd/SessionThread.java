package io.disco.provider.etcd;

import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The threads of every session (its lease timer and its services' worker), and the rules that keep
 * user code off them: no user code may run, and no blocking call of this library may wait, on one.
 */
final class SessionThread extends Thread {

    private SessionThread(Runnable r, String name) {
        super(r, name);
        setDaemon(true);
    }

    /** A single-threaded scheduler on one session thread named {@code name}; a cancelled task leaves its queue at once. */
    static ScheduledThreadPoolExecutor newExecutor(String name) {
        ScheduledThreadPoolExecutor exec = new ScheduledThreadPoolExecutor(1, r -> new SessionThread(r, name));
        exec.setRemoveOnCancelPolicy(true);
        return exec;
    }

    /** @return whether the calling thread is a session thread */
    static boolean onSessionThread() {
        return Thread.currentThread() instanceof SessionThread;
    }

    /** A blocking call made on a session thread would stall (or deadlock) the lease or the services: refuse it. */
    static void refuseOnSessionThread(String call) {
        if (onSessionThread()) {
            throw new IllegalStateException(call + " was called on disco's internal thread " + Thread.currentThread().getName()
                    + ", where it would block the lease or wait for itself; call it from another thread");
        }
    }
}
