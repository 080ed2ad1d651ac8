package io.disco.election;

/**
 * The work a {@link LeadershipRunner} runs while, and only while, its candidate leads.
 *
 * <p>The runner calls {@link #lead} once per term, on a thread of its own (never a thread that keeps
 * the lease alive), a new thread for every term. When the term ends for any reason other than the
 * task returning (the lease lost, the leader key deleted, {@link LeadershipRunner#relinquish()},
 * {@link LeadershipRunner#close()}), the runner interrupts the task's thread and then completes
 * {@link LeaderTerm#ended()}, so that whatever interruptible wait the task is in throws
 * {@link InterruptedException} (see {@link LeaderTerm} for the exact order); the task should then stop
 * touching the guarded resource and return. The next term's task starts only after this one has
 * returned.
 */
@FunctionalInterface
public interface LeaderTask {

    /**
     * Does the leader's work for one term.
     *
     * @param term this term: its leadership and token (attach the token to every request to a guarded
     *     resource), and the signal that it has ended
     * @throws Exception any failure: logged, the term resigned, and the runner campaigns again if it
     *     requeues
     */
    void lead(LeaderTerm term) throws Exception;
}
