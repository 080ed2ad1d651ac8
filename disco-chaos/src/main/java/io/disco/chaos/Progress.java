package io.disco.chaos;

import java.util.Comparator;
import java.util.List;

/**
 * Liveness, printed and never a failure except when nothing was granted at all (and, in the
 * {@link BarrierWorkload}, which grants nothing, no double barrier was passed): acquisitions per
 * minute while no fault ran, while one did, and during each kind of fault; owner errors (sessions
 * that could not open, failed calls); and what must be left behind: no holder key after every owner
 * closed.
 */
final class Progress implements Checker {

    @Override
    public void check(Observations o, Report r) {
        long healthyNanos = 0;
        long faultyNanos = 0;
        long healthyGrants = 0;
        long faultyGrants = 0;
        if (!o.events().isEmpty()) {
            long start = o.events().get(0).nanos();
            long end = o.events().get(o.events().size() - 1).nanos();
            faultyNanos = covered(o.faults());
            healthyNanos = Math.max(0, end - start - faultyNanos);
            for (Observations.Event g : o.events("GRANT")) {
                if (o.faults().stream().anyMatch(x -> x.covers(g.nanos()))) {
                    faultyGrants++;
                } else {
                    healthyGrants++;
                }
            }
        }
        r.figure("grants per minute, no fault running", perMinute(healthyGrants, healthyNanos));
        r.figure("grants per minute, a fault running", perMinute(faultyGrants, faultyNanos));
        for (String type : Nemesis.KINDS) {
            List<Observations.Fault> ofType =
                    o.faults().stream().filter(x -> x.type().equals(type)).toList();
            long grants = o.events("GRANT").stream()
                    .filter(g -> ofType.stream().anyMatch(x -> x.covers(g.nanos())))
                    .count();
            r.figure(
                    "grants per minute during " + type + " (-1: none)",
                    ofType.isEmpty() ? -1 : perMinute(grants, covered(ofType)));
        }
        r.figure(
                "owner errors (a session could not open, a call failed)",
                o.events("ERROR").size());
        r.safety("holder keys left after every owner closed", o.keysLeft(), null);
        if (o.events("GRANT").isEmpty() && o.events(BarrierRounds.PASS).isEmpty()) {
            r.failures.add("no grant (nor a double barrier passed) at all: the owners made no progress");
        }
    }

    /**
     * How long at least one of the faults ran: the length of the union of their intervals, so that a fault
     * dealt within another (the freeze of a partition during a freeze) is not counted twice.
     */
    static long covered(List<Observations.Fault> faults) {
        long total = 0;
        long coveredTo = Long.MIN_VALUE;
        for (Observations.Fault f : faults.stream()
                .sorted(Comparator.comparingLong(Observations.Fault::startNanos))
                .toList()) {
            long from = Math.max(f.startNanos(), coveredTo);
            if (f.endNanos() > from) {
                total += f.endNanos() - from;
                coveredTo = f.endNanos();
            }
        }
        return total;
    }

    private static long perMinute(long count, long nanos) {
        return nanos <= 0 ? 0 : count * 60_000_000_000L / nanos;
    }
}
