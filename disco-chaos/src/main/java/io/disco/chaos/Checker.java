package io.disco.chaos;

import java.util.List;

/** One checker of a run: it reads the {@link Observations} and puts its figures into the {@link Report}. */
interface Checker {

    void check(Observations o, Report r);

    /** @return every checker, in the order of the table, new for each run */
    static List<Checker> all() {
        return List.of(
                new LostUpdates(),
                new ResourceTokens(),
                new GrantTokens(),
                new SharedTokens(),
                new OverlappingHolds(),
                new DoneBeforeNextGrant(),
                new ClockSteps(),
                new Silence(),
                new Progress(),
                new FaultLiveness(),
                new HostileRequests());
    }
}
