package io.disco.chaos;

import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipListener;
import io.disco.election.LeadershipRunner;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The leadership runner workload: each owner runs a {@link LeadershipRunner} whose task, per term,
 * does 5–30 rounds of read → work → write(read + 1) with the term's token, 100 ms apart (a long-running
 * task, as runners' tasks are), then returns (the runner
 * resigns and campaigns again) or, one term in three, relinquishes and waits for its end. The runner
 * heals by itself after a loss; a loss is logged {@code DONE} when the term's {@code ended()} says
 * {@code LOST}, which is the signal the runner promises no later than the election's {@code done()}.
 */
final class RunnerWorkload implements Workload {

    /** Between a term's rounds: a term lasts 0.5–3 s, long enough for a partition to end it. */
    private static final Duration PAUSE = Duration.ofMillis(100);

    @Override
    public String name() {
        return "runner";
    }

    @Override
    public void own(Owner owner) throws Exception {
        AtomicReference<LeadershipRunner> runner = new AtomicReference<>();
        LeadershipRunner.Options options = LeadershipRunner.Options.builder(owner.id, term -> lead(owner, term, runner))
                .listener(new LeadershipListener() {
                    @Override
                    public void leaderChanged(Leadership leader) {
                        owner.say("LEADER " + leader.token().value());
                    }
                })
                .backoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                .build();
        runner.set(owner.backend.newLeadershipRunner(owner.name, options, owner.ttl));
        owner.closeOnExit(runner.get());
        new CountDownLatch(1).await(); // until SIGTERM closes the runner and ends the process
    }

    private static void lead(Owner owner, LeaderTerm term, AtomicReference<LeadershipRunner> runner) throws Exception {
        long token = term.token().value();
        owner.granted(term.token(), Owner.MAIN, Observations.EXCLUSIVE);
        term.ended().thenAccept(end -> {
            if (end == LeaderTerm.End.LOST) {
                owner.say("DONE " + token);
            }
        });
        try {
            int rounds = 5 + owner.random.nextInt(26);
            for (int i = 0; i < rounds && term.isActive(); i++) {
                owner.increment(Owner.MAIN, term.token());
                if (term.awaitEnd(PAUSE)) {
                    break;
                }
            }
            if (term.isActive() && owner.random.nextInt(3) == 0) {
                owner.say("RELINQUISH " + token);
                runner.get().relinquish();
                try {
                    term.awaitEnd(Owner.ACQUIRE);
                } catch (InterruptedException expected) {
                    // the runner interrupts the task of a term it ends
                }
            }
        } finally {
            owner.say("RELEASING " + token); // the task returns: the runner resigns after it
        }
    }
}
