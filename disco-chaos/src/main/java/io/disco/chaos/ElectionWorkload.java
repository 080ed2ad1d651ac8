package io.disco.chaos;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.NotLeaderException;

/**
 * The election workload: campaign → as leader, 1–5 rounds of read → work → write(read + 1) with the
 * term's token, now and then proclaiming a new value between rounds (the token stays) → resign →
 * campaign again.
 */
final class ElectionWorkload implements Workload {

    @Override
    public void own(Owner owner) throws Exception {
        owner.<ElectionService>rounds(
                session -> session.newElection(owner.name),
                election -> owner.hold(
                        timeout -> election.campaign(owner.id, timeout),
                        term -> Owner.MAIN,
                        Observations.EXCLUSIVE,
                        term -> lead(owner, election, term),
                        election::resign));
    }

    /** The leader's rounds in one term, while it still leads. */
    private static void lead(Owner owner, ElectionService election, Leadership term) throws Exception {
        int rounds = 1 + owner.random.nextInt(5);
        for (int i = 0; i < rounds && election.held().isPresent(); i++) {
            owner.increment(Owner.MAIN, term.token());
            if (owner.random.nextInt(3) == 0) {
                try {
                    Leadership p = election.proclaim(owner.id + ":" + i);
                    owner.say("PROCLAIM " + p.token().value());
                } catch (NotLeaderException e) {
                    owner.say("NOTLEADER " + term.token().value());
                    break;
                }
            }
        }
    }

    @Override
    public String name() {
        return "election";
    }
}
