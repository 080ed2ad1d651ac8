package io.disco.client;

import java.util.concurrent.CompletableFuture;

/**
 * The part of the backend SPI ({@link DiscoBackend.Owner#barriers()}) that the client's barriers run on: a few
 * asynchronous steps per primitive, each one or two requests to the backend. The client does the rest, the same on
 * every backend: names, blocking, timeouts, interrupts, the owner's loss and the client's close
 * ({@code Disco.barrier}, {@code Disco.doubleBarrier}).
 *
 * <p>Rules for implementations: every future completes, normally or with a {@link io.disco.fencing.DiscoException},
 * within the backend's request timeout, except the waits ({@link #lowered}, {@link Participant#enter},
 * {@link Participant#leave}), which complete when what they wait for happens; cancelling a wait stops it (its watch
 * is closed) and changes nothing in the backend. Futures complete on the backend's threads: the client never runs
 * user code on them. The barrier's keys are those of the backend's established recipes (etcd's Go {@code recipe},
 * Curator), so that other clients meet at the same barrier.
 */
public interface Barriers {

    /**
     * Raises the barrier {@code name}: creates its key, belonging to no owner (it outlives this one).
     *
     * @param name the barrier's name, already checked by the client
     * @return true if this call created the key; false if it was there
     */
    CompletableFuture<Boolean> raise(String name);

    /**
     * Lowers the barrier {@code name}: deletes its key, whoever created it.
     *
     * @param name the barrier's name
     * @return true if this call deleted the key; false if it was not there
     */
    CompletableFuture<Boolean> lower(String name);

    /**
     * Reads whether the barrier {@code name} is up.
     *
     * @param name the barrier's name
     * @return whether its key is there
     */
    CompletableFuture<Boolean> isUp(String name);

    /**
     * Waits until the barrier {@code name} is down: completes at once if its key is absent now, else once the key is
     * deleted (a later raise does not matter).
     *
     * @param name the barrier's name
     * @return the wait; cancel it to stop watching
     */
    CompletableFuture<Void> lowered(String name);

    /**
     * A new participant of the double barrier {@code name} on this owner: its key will be one of the owner's (gone
     * when the owner is lost), distinct from every other participant's, also of this owner.
     *
     * @param name the double barrier's name, already checked by the client
     * @param participants how many the barrier waits for, positive
     * @return the participant, registered nowhere yet
     */
    Participant participant(String name, int participants);

    /**
     * One participant of a double barrier. The client calls its steps one at a time, in the order enter, then
     * withdraw (if it gave up entering) or leave, then remove (if a step failed, or it gave up leaving); each step acts after
     * the answer to the previous one, even when the previous one's future was cancelled.
     */
    interface Participant {

        /**
         * Registers this participant (creates its key) and waits until {@code participants} are registered at once;
         * the one that completes the count marks the barrier open for all, as the recipe does.
         *
         * @return completes when the barrier is open; fails with {@link IllegalStateException} (and no key left) if
         *     more than {@code participants} are registered
         */
        CompletableFuture<Void> enter();

        /**
         * After an {@link #enter()} given up: removes this participant's key, unless the barrier opened since it was
         * created (then the key stays: the participant is inside).
         *
         * @return true if withdrawn (no key left); false if the barrier had opened
         */
        CompletableFuture<Boolean> withdraw();

        /**
         * Removes this participant's key, and waits until no participant that was registered at that moment is left
         * (participants registered later belong to the next round).
         *
         * @return completes when every participant of the round has left; fails with
         *     {@link io.disco.barrier.BarrierLostException} if this participant's key was already gone (its owner
         *     lost, or the key deleted from outside), before it waits for anyone
         */
        CompletableFuture<Void> leave();

        /**
         * Removes this participant's key if it is still there: after a step that failed, or a {@link #leave()} given up.
         * The client does not wait for it: the key must go even if this request fails (retried until answered, or no
         * longer renewed with the owner's other keys so that it expires), well before the owner ends.
         *
         * @return completes once the key is gone
         */
        CompletableFuture<Void> remove();
    }
}
