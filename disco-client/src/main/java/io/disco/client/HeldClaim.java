package io.disco.client;

import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The distributed hold of a {@link QueuedFencedLock}'s local holder: the service it was claimed through,
 * its grant, and, for an acquisition with a maximum hold time, the timer that ends it. Whoever moves it out
 * of {@link State#HELD} first releases the grant: the holder's last unlock, or the timer.
 */
final class HeldClaim {

    /**
     * Where the hold is; it moves out of {@link #HELD} once, and back only when the backend refused its
     * holder's release for good (the grant is still held and the holder may retry; the maximum hold time's
     * timer, cancelled by that release, is not armed again).
     */
    enum State {
        /** Claimed, not released. */
        HELD,
        /** Released by its holder. */
        RELEASED,
        /** Held past its maximum hold time: released by the timer, reported lost to its holder. */
        EXPIRED
    }

    final LockService service;
    final Grant grant;
    private final String description;
    private final long maxHoldNanos;
    private final AtomicReference<State> state = new AtomicReference<>(State.HELD);
    /** Completes once the timer's release has finished (with its failure, if it failed); never for a hold released by its holder. */
    private final CompletableFuture<Void> expiry = new CompletableFuture<>();

    private final ScheduledFuture<?> timer;
    /** Completes when the hold ends: released (after the release), lost with its service, or expired. */
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    /**
     * The observers' view of this hold: told by the holder's release on its thread, by the timer's release once it
     * has finished, or, when the service ends (lost or closed), by {@link #ended} on the service's callback executor.
     */
    private final HoldWatch watch;

    /**
     * @param maxHoldNanos the maximum hold time, or 0 for none
     * @param watch the observers' view of the hold ({@link HoldWatch#OFF} without observers)
     */
    HeldClaim(LockService service, Grant grant, String description, long maxHoldNanos, HoldWatch watch) {
        this.service = service;
        this.grant = grant;
        this.description = description;
        this.maxHoldNanos = maxHoldNanos;
        this.watch = watch;
        this.timer = maxHoldNanos > 0 ? MaxHoldTimer.schedule(this::expire, maxHoldNanos) : null;
        watch.endsWith(ended, service);
        if (service.done().toCompletableFuture().isDone()) {
            ended.complete(null); // the service finished as it granted
        }
    }

    /** Its service finished (lost or closed): the hold ends. Called on the service's callback executor. */
    void serviceEnded() {
        ended.complete(null);
    }

    private boolean move(State to) {
        return state.compareAndSet(State.HELD, to);
    }

    /** On the timer: releases the grant unless its holder did; the holder learns it from {@link #loss()}. */
    private void expire() {
        if (!move(State.EXPIRED)) {
            return;
        }
        CompletableFuture<Void> release;
        try {
            release = service.unlockAsync();
        } catch (RuntimeException e) {
            release = CompletableFuture.failedFuture(e);
        }
        release.whenComplete((v, e) -> {
            watch.lost(loss().orElseThrow()); // on the service's callback executor: lost, past its maximum hold time
            if (e != null) {
                expiry.completeExceptionally(e);
            } else {
                expiry.complete(null);
            }
            ended.complete(null);
        });
    }

    /**
     * On the holder's thread, its last unlock: releases the grant, or, if the timer did, waits for that
     * release to finish (so that the next holder of the service starts from nothing) and throws the loss.
     * The hold has ended when this returns or throws, unless {@link #refused()} says the backend refused
     * the release and the grant is still held.
     *
     * @throws LockLostException if the hold was lost (its lease, or its maximum hold time)
     */
    void release() {
        if (timer != null) {
            timer.cancel(false);
        }
        if (move(State.RELEASED)) {
            try {
                service.unlock();
            } catch (RuntimeException e) {
                if (refused()) {
                    state.set(State.HELD); // the thread still holds and may retry its unlock
                    throw e;
                }
                watch.lost(e); // lost before the release, or the release did not complete: given up
                endAfterRelease();
                throw e;
            }
            watch.released();
            endAfterRelease();
            return;
        }
        LockLostException expired = loss().orElseThrow();
        watch.lost(expired);
        try {
            expiry.join();
        } catch (CompletionException e) {
            service.unlock(); // the timer's release failed: the service still holds the grant; release it here
        }
        throw expired;
    }

    /**
     * @return whether the service still holds this very grant after a failed release: the backend refused the
     *     delete for good (a permission taken away), as opposed to no answer (the grant is then given up)
     */
    boolean refused() {
        return service.held().filter(g -> g.token().equals(grant.token())).isPresent();
    }

    /** The hold ended by its release: {@link #done()}'s dependents run off the releasing thread. */
    private void endAfterRelease() {
        ended.completeAsync(() -> null);
    }

    /** @return the loss of this hold: past its maximum hold time, or its service's */
    Optional<LockLostException> loss() {
        if (state.get() == State.EXPIRED) {
            return Optional.of(new LockLostException(
                    description + " was held past its maximum hold time of "
                            + TimeUnit.NANOSECONDS.toMillis(maxHoldNanos) + " ms and released: its token is stale",
                    null));
        }
        return service.err();
    }

    /** @return completes when the hold ends: released, its service finished, or (with a maximum hold time) the timer released it */
    CompletionStage<Void> done() {
        return ended.minimalCompletionStage();
    }
}
