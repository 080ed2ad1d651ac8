package io.disco.testservers;

import java.util.concurrent.Executor;

/**
 * Threads for a test's blocking tasks: since JDK 25 the default async pool is the common pool even at parallelism
 * 1 (2 cores), where two blocking tasks would wait for each other.
 */
public final class ThreadPerTask {

    private ThreadPerTask() {}

    /** Runs each task on a new daemon thread. */
    public static final Executor DAEMON = task -> {
        Thread t = new Thread(task);
        t.setDaemon(true);
        t.start();
    };
}
