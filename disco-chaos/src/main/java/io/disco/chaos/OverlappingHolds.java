package io.disco.chaos;

import java.util.List;

/**
 * Checker 4, ownership as the library reported it: two holds of one register overlap (unless both
 * are shared); such an overlap is safe only when the earlier owner was frozen across the later
 * grant (a paused process cannot run its own expiry check, and the guard rejects what it sends on
 * waking); and on Redis one where a promotion of the sentinels ({@value RedisMembers#FAILOVER}, observed) came
 * between the earlier grant and the later one: exclusion is not guaranteed across a failover (the claim may not have
 * reached the promoted replica), only the tokens are, and such overlaps are counted in a row of their own, never as
 * passing silently. Every other overlap is a safety failure: a partitioned owner must have seen its loss first.
 * Two threads of one process ({@code o1.t0}, {@code o1.t2}) are two owners here: their holds must not
 * overlap either; a freeze of their process covers both.
 */
final class OverlappingHolds implements Checker {

    @Override
    public void check(Observations o, Report r) {
        List<Observations.Hold> holds = o.holds();
        long frozen = 0;
        long failover = 0;
        long unexplained = 0;
        String first = null;
        for (int i = 0; i < holds.size(); i++) {
            Observations.Hold a = holds.get(i);
            for (int j = i + 1; j < holds.size() && holds.get(j).fromNanos() < a.toNanos(); j++) {
                Observations.Hold b = holds.get(j);
                if (a.owner().equals(b.owner())
                        || !a.key().equals(b.key())
                        || a.shared() && b.shared()
                        || !a.overlaps(b)) {
                    continue;
                }
                boolean wasFrozen = o.faults().stream()
                        .anyMatch(x -> x.type().equals("freeze-owner")
                                && x.target().equals(Observations.process(a.owner()))
                                && x.startNanos() < b.fromNanos()
                                && x.endNanos() > a.fromNanos());
                boolean acrossFailover = o.faults().stream()
                        .anyMatch(x -> x.type().equals(RedisMembers.FAILOVER)
                                && a.fromNanos() < x.startNanos()
                                && x.startNanos() < b.fromNanos());
                if (wasFrozen) {
                    frozen++;
                } else if (acrossFailover) {
                    failover++;
                } else {
                    unexplained++;
                    first = first == null ? a + " and " + b : first;
                }
            }
        }
        r.figure("overlapping holds, earlier owner frozen (the guard's case)", frozen);
        r.figure(
                "overlapping holds across a Redis failover (permitted: no exclusion there; the guard's case)",
                failover);
        r.safety("overlapping holds, earlier owner not frozen", unexplained, first);
    }
}
