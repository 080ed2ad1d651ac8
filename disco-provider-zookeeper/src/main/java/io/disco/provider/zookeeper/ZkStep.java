package io.disco.provider.zookeeper;

import io.disco.core.internal.UserFuture;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * One asynchronous barrier step on ZooKeeper ({@link ZkBarriers}, {@link ZkBarrierParticipant}): its requests go in
 * the background, and their answers and its watch's events are handed to the session's thread, where the step
 * reacts; nothing here blocks, so Curator's and ZooKeeper's threads only hand over. A request that failed for the
 * connection (after Curator's own retries) is sent again after a back-off, for as long as the session's thread
 * runs; a watch event runs the step's {@linkplain #read read} again once no request is in flight. The step's
 * {@link #result} is what the client waits for: once it is complete (answered, failed, or cancelled by the client)
 * the step sends nothing more, ignores later answers and events, removes its watches from the client (Curator's
 * {@link WatcherRemoveCuratorFramework}, so a wait given up leaves no watcher behind) and, once no request is in
 * flight any more, tells its owner it is {@linkplain #ended ended}: the next step of a participant starts only then.
 * {@link #stop()} ends it in the same way without completing the result (the session ended under a wait that the
 * client rides through to its next owner).
 *
 * <p>Thread-safe: every state change is under the step's monitor, none of which waits.
 *
 * @param <T> the step's answer
 */
final class ZkStep<T> {

    /** Sends one background request through {@code client}, answered to {@code callback}. */
    interface Send {
        void send(CuratorFramework client, CuratorWatcher watcher, BackgroundCallback callback) throws Exception;
    }

    /** Reacts to one answer (any code but a connection failure, which is retried) on the session's thread. */
    interface Answer {
        void answer(CuratorEvent event) throws Exception;
    }

    private static final long MAX_BACKOFF_MS = 1_000;

    /** The step's outcome, as the client waits for it; cancelling it ends the step. */
    final CompletableFuture<T> result = new CompletableFuture<>();

    private final SessionCore core;
    /** What the step does, for messages: "raising the barrier /a". */
    final String doing;

    private final WatcherRemoveCuratorFramework client;
    private final CuratorWatcher watcher;

    // guarded by this
    private Runnable read;
    /** An event that itself ends the step (its result completes with null), or null. */
    private Watcher.Event.EventType endingEvent;

    private Runnable onEnd = () -> {};
    private Runnable onExpired = () -> fail(KeeperException.create(KeeperException.Code.SESSIONEXPIRED));
    private int inFlight;
    private boolean changed;
    private boolean stopped;
    private boolean ended;
    private ScheduledFuture<?> retry;
    private ScheduledFuture<?> bound;
    private long backoffMs = 50;

    ZkStep(SessionCore core, String doing) {
        this.core = core;
        this.doing = doing;
        this.client = core.client().newWatcherRemoveCuratorFramework();
        this.watcher = event -> {
            Watcher.Event.EventType type = event.getType();
            if (type != Watcher.Event.EventType.None) { // a connection event: the watch still stands
                core.onSessionThread(() -> changed(type));
            }
        };
        result.whenComplete((v, e) -> core.onSessionThread(this::over));
    }

    /**
     * @param onEnd run once the step has ended (result complete or stopped, nothing in flight); at once if it has
     */
    void onEnd(Runnable onEnd) {
        synchronized (this) {
            if (!ended) {
                this.onEnd = onEnd;
                return;
            }
        }
        onEnd.run();
    }

    /** @param onExpired run when an answer says the session expired (by default the step fails) */
    synchronized void onExpired(Runnable onExpired) {
        this.onExpired = onExpired;
    }

    /**
     * Bounds the step by {@code timeout}: its result fails with a {@link DiscoException} saying so if it is not
     * complete by then (a request may still land later).
     */
    ZkStep<T> bound(Duration timeout) {
        Runnable late = () -> result.completeExceptionally(new DiscoException("ZooKeeper at " + core.connectString()
                + " did not answer in time (" + timeout.toMillis() + " ms, the request timeout) while " + doing));
        ScheduledFuture<?> timer;
        try {
            timer = core.schedule(late, timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) { // the session's thread is gone: the JDK's timer instead
            CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .execute(late);
            return this;
        }
        synchronized (this) {
            bound = timer;
        }
        if (result.isDone()) {
            timer.cancel(false);
        }
        return this;
    }

    /**
     * @return the result as the client gets it: completed on the callback executor, never on a session thread;
     *     cancelling it cancels the step
     */
    CompletableFuture<T> handOut() {
        UserFuture<T> user = new UserFuture<>(core.callbackExecutor(), result);
        result.whenComplete((v, e) -> core.deliver(() -> user.answer(v, e)));
        return user;
    }

    /** Runs {@code read} now, and again after every watch event (once no request is in flight). */
    void read(Runnable read) {
        onChange(read);
        read.run();
    }

    /** Runs {@code read} after every watch event from now on (once no request is in flight). */
    synchronized void onChange(Runnable read) {
        this.read = read;
    }

    /**
     * Makes an event of {@code type} end the step, its result completed with null, without reading again: for a step
     * whose only watch is on the node it waits for (the event says what a read would find, a round trip sooner).
     */
    synchronized void endOn(Watcher.Event.EventType type) {
        this.endingEvent = type;
    }

    /**
     * Sends a request, unless the step is over; its answer runs on the session's thread, unless the step is over
     * by then; a connection failure sends it again after a back-off.
     */
    void send(Send send, Answer answer) {
        synchronized (this) {
            if (result.isDone() || stopped) {
                return;
            }
            inFlight++;
        }
        try {
            send.send(client, watcher, (c, event) -> core.onSessionThread(() -> answered(send, answer, event)));
        } catch (Exception e) { // the client is closed, or refused the request outright
            synchronized (this) {
                inFlight--;
            }
            fail(e);
            endIfIdle();
        }
    }

    private void answered(Send send, Answer answer, CuratorEvent event) {
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        Runnable expired = null;
        synchronized (this) {
            inFlight--;
            if (result.isDone() || stopped) {
                removeWatches();
            } else if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.OPERATIONTIMEOUT) {
                retryLater(() -> send(send, answer));
                return;
            } else if (code == KeeperException.Code.SESSIONEXPIRED) {
                expired = onExpired;
            }
        }
        if (expired != null) {
            expired.run();
            endIfIdle();
            return;
        }
        if (!result.isDone() && !isStopped()) {
            try {
                answer.answer(event);
            } catch (Exception e) {
                fail(e);
            }
        }
        Runnable again = null;
        synchronized (this) {
            if (inFlight == 0 && retry == null && changed && !result.isDone() && !stopped) {
                changed = false;
                again = read;
            }
        }
        if (again != null) {
            again.run();
        }
        endIfIdle();
    }

    private synchronized boolean isStopped() {
        return stopped;
    }

    /** Under the monitor: sends {@code again} after the back-off, on the session's thread. */
    private void retryLater(Runnable again) {
        long delay = backoffMs;
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
        try {
            retry = core.schedule(
                    () -> {
                        synchronized (this) {
                            retry = null;
                        }
                        again.run();
                        endIfIdle();
                    },
                    delay,
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            stopped = true; // the session ended: nothing more is sent
        }
    }

    /**
     * A watch event of {@code type}: the step's end if it is the {@linkplain #endOn ending} one, else a new read, now or
     * once the request in flight is answered.
     */
    private void changed(Watcher.Event.EventType type) {
        Runnable again;
        boolean ends;
        synchronized (this) {
            if (result.isDone() || stopped) {
                return;
            }
            ends = type == endingEvent;
            if (!ends) {
                if (read == null) {
                    return;
                }
                if (inFlight > 0 || retry != null) {
                    changed = true;
                    return;
                }
            }
            again = read;
        }
        if (ends) {
            result.complete(null);
            return;
        }
        again.run();
        endIfIdle();
    }

    /** Fails the step with ZooKeeper's {@code event} code, as an answer it does not expect. */
    void unexpected(CuratorEvent event) {
        fail(KeeperException.create(KeeperException.Code.get(event.getResultCode()), event.getPath()));
    }

    /** Fails the step with {@code e}, as a ZooKeeper failure while doing what it does. */
    void fail(Exception e) {
        result.completeExceptionally(e instanceof DiscoException d ? d : core.failure(doing, e));
    }

    /** Ends the step without an answer: nothing more is sent, its watches go. */
    void stop() {
        synchronized (this) {
            stopped = true;
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            removeWatches();
        }
        endIfIdle();
    }

    /** The result completed: nothing more is sent, the watches go. */
    private void over() {
        synchronized (this) {
            if (retry != null) {
                retry.cancel(false);
                retry = null;
            }
            if (bound != null) {
                bound.cancel(false);
            }
            removeWatches();
        }
        endIfIdle();
    }

    private void removeWatches() {
        if (core.client().getState() != CuratorFrameworkState.STARTED) {
            return; // closed: its watches went with it
        }
        try {
            client.removeWatchers();
        } catch (RuntimeException e) {
            // the client is closed: its watches went with it
        }
    }

    private void endIfIdle() {
        Runnable end;
        synchronized (this) {
            if (ended || inFlight > 0 || retry != null || !(result.isDone() || stopped)) {
                return;
            }
            ended = true;
            end = onEnd;
        }
        end.run();
    }

    /** @return whether the step has ended: complete or stopped, and nothing in flight */
    synchronized boolean ended() {
        return ended;
    }

    @Override
    public String toString() {
        return doing;
    }
}
