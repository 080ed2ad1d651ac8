package io.disco.client;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one timer of every {@link io.disco.lock.FencedLock}'s maximum hold times: a daemon thread that only starts a
 * release ({@link HeldClaim#expire}: a state change and an asynchronous unlock), so no expiry waits for
 * another, and nothing a lease depends on runs here. A released hold cancels its timer, which is then
 * removed at once (no garbage of cancelled timers).
 */
final class MaxHoldTimer {

    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private MaxHoldTimer() {}

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "disco-max-hold");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    static ScheduledFuture<?> schedule(Runnable expiry, long nanos) {
        return TIMER.schedule(expiry, nanos, TimeUnit.NANOSECONDS);
    }
}
