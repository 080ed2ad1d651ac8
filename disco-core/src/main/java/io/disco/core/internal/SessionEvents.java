package io.disco.core.internal;

import io.disco.core.SessionListener;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a session's listeners of its events and its services' events: in event order, one event at
 * a time, on the callback executor (never a session thread), batched over a few milliseconds so that
 * a busy service does not wake a callback thread twice per acquisition. Nothing is queued when there
 * is no listener. For providers.
 */
public final class SessionEvents {

    private static final Logger LOG = LoggerFactory.getLogger(SessionEvents.class);

    /** How long events wait to be told together. */
    private static final long EVENT_BATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final List<SessionListener> listeners;
    private final ScheduledExecutorService timer;
    private final Callbacks callbacks;
    private final ConcurrentLinkedQueue<Runnable> events = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean telling = new AtomicBoolean();
    /** The latest batch scheduled on the timer. */
    private volatile ScheduledFuture<?> batch;
    /** Set by {@link #end()}: events are told without the timer. */
    private volatile boolean ended;

    /**
     * @param listeners who is told, in this order
     * @param timer where the batch's delay runs (a session's lease timer: its tasks are short)
     * @param callbacks where the listeners are called
     */
    public SessionEvents(List<SessionListener> listeners, ScheduledExecutorService timer, Callbacks callbacks) {
        this.listeners = List.copyOf(listeners);
        this.timer = timer;
        this.callbacks = callbacks;
    }

    /** @return whether anyone listens: callers skip building an event's arguments otherwise */
    public boolean listened() {
        return !listeners.isEmpty();
    }

    /**
     * Tells every listener of an event (see the class comment); a listener that throws is logged.
     *
     * @param event what to call on each listener
     */
    public void tell(Consumer<SessionListener> event) {
        if (listeners.isEmpty()) {
            return;
        }
        events.add(() -> {
            for (SessionListener l : listeners) {
                try {
                    event.accept(l);
                } catch (RuntimeException e) {
                    LOG.warn("a session listener threw", e);
                }
            }
        });
        if (!telling.compareAndSet(false, true)) {
            return; // a batch is on its way, or being told
        }
        if (ended) {
            callbacks.deliver(this::tellQueued);
            return;
        }
        ScheduledFuture<?> f;
        try {
            f = timer.schedule(() -> callbacks.deliver(this::tellQueued), EVENT_BATCH_NANOS, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shutDown) {
            callbacks.deliver(this::tellQueued); // tell what is left at once
            return;
        }
        batch = f;
        if (ended && f.cancel(false)) {
            callbacks.deliver(this::tellQueued); // ended meanwhile: its timer may drop the batch
        }
    }

    /**
     * The session ends: what is queued is told at once, and so is every later event, without the timer, which the
     * session is about to stop (a timer stopped with {@code shutdownNow} drops a batch it was to start, and the
     * events in it, the session's last ones among them, would never be told). Call it before stopping the timer.
     */
    public void end() {
        ended = true;
        ScheduledFuture<?> f = batch;
        if (f != null && f.cancel(false)) {
            callbacks.deliver(this::tellQueued); // the batch had not started: tell it now
        }
    }

    private void tellQueued() {
        try {
            for (Runnable r; (r = events.poll()) != null; ) {
                r.run();
            }
        } finally {
            telling.set(false);
            if (!events.isEmpty() && telling.compareAndSet(false, true)) {
                callbacks.deliver(this::tellQueued); // more came while telling: no need to wait for a batch
            }
        }
    }
}
