package io.disco.shedlock;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of a ShedLock lock: the client's lock, held by a thread of the provider's own (the
 * holder, which runs no user code), so that the hold can outlive the task's {@code unlock()}
 * ({@code lockAtLeastFor}) and be released by a timer ({@code lockAtMostFor}) or extended from any thread
 * ({@code KeepAliveLockProvider}'s). The task's thread, the timer and the extender only move the state
 * and ask the holder to release; the holder waits for that request or for the loss of the lease, and
 * unlocks.
 */
final class ShedHold {

    private static final Logger log = LoggerFactory.getLogger(ShedHold.class);

    /** Where the hold is. Moves forward only: {@link #move} checks every transition. */
    enum State {
        /** Not yet known whether the claim succeeded. */
        ACQUIRING,
        /** Not acquired: another process or thread holds the name. */
        NOT_ACQUIRED,
        /** Held for the task, which has not unlocked. */
        HELD,
        /** The task unlocked before {@code lockAtLeastFor}: the key is kept until then. */
        LINGERING,
        /** Released (by the task's unlock, or at the end of {@code lockAtLeastFor}). */
        RELEASED,
        /** Held past {@code lockAtMostFor} and released by the timer: the run's token is stale. */
        EXPIRED,
        /** The client's lease was lost while held: the run's token is stale. */
        LOST;

        boolean canMoveTo(State to) {
            return switch (this) {
                case ACQUIRING -> to == NOT_ACQUIRED || to == HELD || to == RELEASED;
                case RELEASED -> false;
                case HELD -> to == LINGERING || to == RELEASED || to == EXPIRED || to == LOST;
                case LINGERING -> to == RELEASED;
                case NOT_ACQUIRED, EXPIRED, LOST -> false;
            };
        }
    }

    private final String name;
    private final FencedLock lock;
    private final ScheduledExecutorService timer;
    private final Object monitor = new Object();
    /** Completed by the holder with whether the claim succeeded. */
    private final CompletableFuture<Boolean> acquired = new CompletableFuture<>();
    /** Completed by whoever asks the holder to release. */
    private final CompletableFuture<Void> releaseRequested = new CompletableFuture<>();
    /** Completed by the holder once it has unlocked. */
    private final CompletableFuture<Void> released = new CompletableFuture<>();
    /** Guarded by {@link #monitor}. */
    private State state = State.ACQUIRING;
    /** Guarded by {@link #monitor}: the pending end of lockAtMostFor (while HELD) or of lockAtLeastFor (while LINGERING). */
    private ScheduledFuture<?> deadline;
    /** System.nanoTime() at which lockAtLeastFor ends; guarded by {@link #monitor}. */
    private long atLeastUntil;

    private long atMostNanos;
    /** System.nanoTime() from which the first lockAtMostFor counts. */
    private final long deadlineStart;

    private volatile FencingToken token;
    private volatile CompletableFuture<Void> done;
    private volatile DiscoException loss;

    /**
     * @param startNanos System.nanoTime() when the lock was asked for: both durations count from then
     */
    ShedHold(
            String name,
            FencedLock lock,
            ScheduledExecutorService timer,
            long startNanos,
            Duration atMost,
            Duration atLeast) {
        this.name = name;
        this.lock = lock;
        this.timer = timer;
        this.atMostNanos = atMost.toNanos();
        this.atLeastUntil = startNanos + atLeast.toNanos();
        this.deadlineStart = startNanos;
    }

    /** Guarded by {@link #monitor}. */
    private void move(State to) {
        if (!state.canMoveTo(to)) {
            throw new IllegalStateException("the hold of '" + name + "' cannot move from " + state + " to " + to);
        }
        state = to;
    }

    State state() {
        synchronized (monitor) {
            return state;
        }
    }

    /** The holder thread: claims, reports, waits for a release request or the loss, unlocks. Runs no user code. */
    void hold() {
        boolean ok;
        try {
            ok = lock.tryLock();
        } catch (RuntimeException | Error e) {
            notAcquired(() -> acquired.completeExceptionally(e));
            return;
        }
        if (!ok) {
            notAcquired(() -> acquired.complete(false));
            return;
        }
        try {
            token = lock.token();
            done = lock.done().toCompletableFuture();
        } catch (RuntimeException e) { // lost in the instant after the claim: not acquired
            unlockHere();
            acquired.completeExceptionally(e);
            return;
        }
        synchronized (monitor) {
            if (state == State.ACQUIRING) { // not abandoned by the caller meanwhile
                move(State.HELD);
                long remaining = deadlineStart + atMostNanos - System.nanoTime();
                deadline = timer.schedule(this::expire, Math.max(0, remaining), TimeUnit.NANOSECONDS);
            }
        }
        acquired.complete(true);
        CompletableFuture.anyOf(releaseRequested, done).join();
        if (!releaseRequested.isDone()) {
            loss = lock.err().orElse(null);
            synchronized (monitor) {
                if (state == State.HELD) {
                    move(State.LOST);
                    log.warn(
                            "the lock '{}' was lost while its task ran (the client's lease ended): another instance"
                                    + " may run it now; its token {} is stale",
                            name,
                            token);
                } else if (state == State.LINGERING) {
                    move(State.RELEASED);
                }
                cancelDeadline();
            }
        }
        unlockHere();
    }

    private void unlockHere() {
        try {
            lock.unlock();
        } catch (DiscoException e) {
            // the loss, told already (state LOST or EXPIRED); the local lock is released all the same
        } catch (RuntimeException e) {
            log.warn("could not release the lock '{}' (its lease will): {}", name, e.toString());
        } finally {
            released.complete(null);
        }
    }

    /**
     * On the caller's thread: waits for the claim.
     *
     * @return whether it was acquired
     */
    boolean awaitAcquired() throws InterruptedException {
        try {
            return acquired.get();
        } catch (InterruptedException e) {
            abandon();
            throw e;
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    /** The claim was refused or failed: {@code tell} completes {@code acquired} so, and the hold ends unheld. */
    private void notAcquired(Runnable tell) {
        synchronized (monitor) {
            if (state == State.ACQUIRING) {
                move(State.NOT_ACQUIRED);
            }
        }
        tell.run();
        released.complete(null);
    }

    /** The caller gave up waiting: a hold acquired meanwhile is released at once. */
    private void abandon() {
        synchronized (monitor) {
            if (state == State.ACQUIRING) {
                move(State.RELEASED);
            } else if (state == State.HELD) {
                move(State.RELEASED);
                cancelDeadline();
            }
        }
        releaseRequested.complete(null);
    }

    /** The end of lockAtMostFor, on the timer thread: releases and marks the run's token stale. */
    private void expire() {
        if (!deadlineReached(State.HELD, State.EXPIRED)) {
            return;
        }
        log.warn(
                "the task of '{}' ran past its lockAtMostFor of {} ms: the lock was released, another instance may"
                        + " run it now, and its token {} is stale",
                name,
                TimeUnit.NANOSECONDS.toMillis(atMostNanos),
                token);
        releaseRequested.complete(null);
    }

    /** The end of lockAtLeastFor after an unlock, on the timer thread. */
    private void endLinger() {
        if (deadlineReached(State.LINGERING, State.RELEASED)) {
            releaseRequested.complete(null);
        }
    }

    /**
     * The deadline of state {@code from} fired, on the timer thread: moves to {@code to} unless the hold left
     * {@code from} first (then the deadline, cancelled too late, does nothing).
     *
     * @return whether it moved
     */
    private boolean deadlineReached(State from, State to) {
        synchronized (monitor) {
            if (state != from) {
                return false;
            }
            move(to);
            deadline = null;
            return true;
        }
    }

    /** Guarded by {@link #monitor}. */
    private void cancelDeadline() {
        if (deadline != null) {
            deadline.cancel(false);
            deadline = null;
        }
    }

    /**
     * The task's unlock (ShedLock calls it on the task's thread): releases now, or keeps the key until the
     * end of lockAtLeastFor. A hold already expired or lost is only logged: the run is over either way.
     */
    void unlock() {
        boolean now;
        synchronized (monitor) {
            switch (state) {
                case HELD -> {
                    cancelDeadline();
                    long linger = atLeastUntil - System.nanoTime();
                    if (linger > 0) {
                        move(State.LINGERING);
                        deadline = timer.schedule(this::endLinger, linger, TimeUnit.NANOSECONDS);
                        now = false;
                    } else {
                        move(State.RELEASED);
                        now = true;
                    }
                }
                case EXPIRED, LOST -> {
                    log.warn(
                            "the task of '{}' ended after its lock was {} (token {})",
                            name,
                            state == State.EXPIRED ? "released at its lockAtMostFor" : "lost with the client's lease",
                            token);
                    return;
                }
                case RELEASED -> {
                    log.warn(
                            "the task of '{}' ended after the provider was closed and released its lock (token {})",
                            name,
                            token);
                    return;
                }
                default -> throw new IllegalStateException("the lock '" + name + "' is not held (" + state + ")");
            }
        }
        if (now) {
            releaseRequested.complete(null);
            released.join(); // the holder's unlock: one request, bounded by the client's request timeout
        }
    }

    /**
     * ShedLock's extend, from any thread: lockAtMostFor and lockAtLeastFor count from now.
     *
     * @return whether the hold was still held (not expired, lost or unlocked) and is extended
     */
    boolean extend(Duration atMost, Duration atLeast) {
        synchronized (monitor) {
            if (state != State.HELD || done.isDone()) {
                return false;
            }
            cancelDeadline();
            long now = System.nanoTime();
            atMostNanos = atMost.toNanos();
            atLeastUntil = now + atLeast.toNanos();
            deadline = timer.schedule(this::expire, atMostNanos, TimeUnit.NANOSECONDS);
            return true;
        }
    }

    /** Releases whatever is held or kept, at once: the provider is closing. */
    void releaseNow() {
        synchronized (monitor) {
            if (state == State.HELD || state == State.LINGERING || state == State.ACQUIRING) {
                move(State.RELEASED);
                cancelDeadline();
            }
        }
        releaseRequested.complete(null);
    }

    /** @return completes once the holder has unlocked (or never held) */
    CompletableFuture<Void> released() {
        return released;
    }

    /**
     * @return the run's token
     * @throws LockLostException if the run's hold expired (lockAtMostFor) or was lost (the lease)
     */
    FencingToken token() {
        State s = state();
        if (s == State.EXPIRED) {
            throw new LockLostException(
                    "the lock '" + name + "' was held past its lockAtMostFor of "
                            + TimeUnit.NANOSECONDS.toMillis(atMostNanos) + " ms and released: token " + token
                            + " is stale",
                    null);
        }
        if (s == State.LOST || (done != null && done.isDone() && s == State.HELD)) {
            throw new LockLostException(
                    "the lock '" + name + "' was lost with the client's lease: token " + token + " is stale", loss);
        }
        return token;
    }

    /** @return the run's loss, if its hold expired or was lost */
    Optional<LockLostException> err() {
        try {
            token();
            return Optional.empty();
        } catch (LockLostException e) {
            return Optional.of(e);
        }
    }

    String name() {
        return name;
    }

    @Override
    public String toString() {
        return "ShedHold['" + name + "', " + state() + ", token " + token + "]";
    }
}
