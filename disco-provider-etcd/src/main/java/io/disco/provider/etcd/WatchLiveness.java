package io.disco.provider.etcd;

import io.etcd.jetcd.Watch;
import io.etcd.jetcd.watch.WatchResponse;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Notices watches whose etcd member stopped answering. A member that froze (SIGSTOP, a stalled
 * process) keeps its TCP connection open: the watch neither errors nor delivers, and a
 * require-leader watch does not help, since the member cannot even say that it lost its leader. So
 * a watch must confirm its creation within the probe timeout (its owner asks for the created
 * notification), and a watch that has delivered nothing for its {@code silence} is asked for a
 * progress report (one small message on its own stream; etcd answers it from memory, without raft
 * or disk), which must come within the probe timeout. A watch that misses either is declared
 * stuck: {@code onStuck} runs once, and the owner moves the watch (a new watch is a new stream,
 * which the client's round-robin balancing puts on another member).
 *
 * <p>The silence is chosen per watch: short where a hand-over waits on the watch, long where it only
 * guards against a rare event. One ticker per instance, on the owner's executor, runs only while
 * some watch is registered. Thread-safe: jetcd delivers on its event loop, the ticker runs on the
 * executor.
 */
final class WatchLiveness {

    private final ScheduledExecutorService exec;
    private final long probeTimeoutNanos;
    private final Set<Probed> watches = ConcurrentHashMap.newKeySet();
    private final Object tickerLock = new Object();
    private ScheduledFuture<?> ticker;

    WatchLiveness(ScheduledExecutorService exec, long probeTimeoutNanos) {
        this.exec = exec;
        this.probeTimeoutNanos = probeTimeoutNanos;
    }

    /**
     * Wraps {@code listener} so that every response counts as a sign of life. Call
     * {@link Probed#attach} with the watcher once it exists; {@code onStuck} runs on the executor.
     */
    Probed probe(Watch.Listener listener, long silenceNanos, Runnable onStuck) {
        return new Probed(listener, silenceNanos, onStuck);
    }

    private void tick() {
        long now = System.nanoTime();
        for (Probed p : watches) {
            p.check(now);
        }
        synchronized (tickerLock) {
            if (watches.isEmpty() && ticker != null) {
                ticker.cancel(false);
                ticker = null;
            }
        }
    }

    private void startTicker() {
        synchronized (tickerLock) {
            if (ticker == null) {
                long period = Math.max(1, probeTimeoutNanos / 2);
                try {
                    ticker = exec.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    // shut down: nothing left to probe
                }
            }
        }
    }

    /** One watch under observation. */
    final class Probed implements Watch.Listener {
        private final Watch.Listener listener;
        private final long silenceNanos;
        private final Runnable onStuck;
        private volatile Watch.Watcher watcher;
        private volatile boolean heard;
        private volatile long heardAt = System.nanoTime();
        private volatile long probedAt;

        private Probed(Watch.Listener listener, long silenceNanos, Runnable onStuck) {
            this.listener = listener;
            this.silenceNanos = silenceNanos;
            this.onStuck = onStuck;
        }

        /** Starts observing {@code w}; returns it. */
        Watch.Watcher attach(Watch.Watcher w) {
            watcher = w;
            watches.add(this);
            startTicker();
            return w;
        }

        /** Stops observing (the watch was closed or broke). */
        void detach() {
            watches.remove(this);
        }

        private void check(long now) {
            Watch.Watcher w = watcher;
            if (w == null) {
                return;
            }
            if (!heard) {
                if (now - heardAt >= probeTimeoutNanos) {
                    stuck(); // not even created
                }
                return;
            }
            if (now - heardAt < silenceNanos) {
                return;
            }
            long probed = probedAt;
            if (probed - heardAt < 0) {
                probedAt = now;
                w.requestProgress();
            } else if (now - probed >= probeTimeoutNanos) {
                stuck();
            }
        }

        private void stuck() {
            detach();
            onStuck.run();
        }

        @Override
        public void onNext(WatchResponse response) {
            heardAt = System.nanoTime();
            heard = true;
            listener.onNext(response);
        }

        @Override
        public void onError(Throwable t) {
            detach();
            listener.onError(t);
        }

        @Override
        public void onCompleted() {
            detach();
            listener.onCompleted();
        }
    }
}
