package io.disco.election;

/**
 * What a {@link LeadershipRunner} tells about its terms and the election. Called on the runner's
 * listener executor (one at a time, in order, by default), never on a thread that keeps the lease
 * alive: a slow or throwing listener delays nothing but the next notification, and a throw is logged.
 */
public interface LeadershipListener {

    /**
     * This runner leads: its task is about to start.
     *
     * @param term the new term's leadership
     */
    default void elected(Leadership term) {}

    /**
     * This runner's term has ended and its task has returned.
     *
     * @param term the ended term's leadership
     * @param end why it ended
     * @param cause the loss ({@link LeadershipLostException}) or the task's exception; null for the other ends
     */
    default void revoked(Leadership term, LeaderTerm.End end, Throwable cause) {}

    /**
     * The election's leader changed, or proclaimed a new value: whoever leads, this runner or another.
     *
     * @param leader the current leadership
     */
    default void leaderChanged(Leadership leader) {}
}
