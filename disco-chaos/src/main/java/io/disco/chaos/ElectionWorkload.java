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
    public String name() {
        return "election";
    }

    @Override
    public void own(Owner owner) throws Exception {
        owner.sessions(session -> {
            try (ElectionService election = session.newElection(owner.name);
                 AutoCloseable closing = owner.closing()) {
                while (Owner.alive(session)) {
                    Leadership term = owner.acquire(timeout -> election.campaign(owner.id, timeout));
                    if (term == null) {
                        continue;
                    }
                    owner.granted(term.token(), Owner.MAIN, Observations.EXCLUSIVE);
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
                    owner.release(term.token(), election::resign);
                }
            }
        });
    }
}
