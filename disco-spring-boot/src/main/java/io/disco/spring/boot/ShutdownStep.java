package io.disco.spring.boot;

import org.springframework.context.SmartLifecycle;

/**
 * One step of disco's part of a graceful shutdown: nothing to do when the context starts; when it stops, in its
 * phase, the step's {@link #shutDown()}.
 */
abstract class ShutdownStep implements SmartLifecycle {

    private final int phase;
    private volatile boolean running;

    ShutdownStep(int phase) {
        this.phase = phase;
    }

    /** What the step does when the context stops. */
    abstract void shutDown();

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        try {
            shutDown();
        } finally {
            running = false;
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return phase;
    }
}
