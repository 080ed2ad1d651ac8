package io.disco.chaos;

/**
 * Liveness, printed and never a failure except when nothing was granted at all: acquisitions per
 * minute while no fault ran and while one did, and owner errors (sessions that could not open,
 * failed calls); and what must be left behind: no holder key after every owner closed.
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
            faultyNanos = o.faults().stream().mapToLong(x -> x.endNanos() - x.startNanos()).sum();
            healthyNanos = Math.max(1, end - start - faultyNanos);
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
        r.figure("owner errors (a session could not open, a call failed)", o.events("ERROR").size());
        r.safety("holder keys left after every owner closed", o.keysLeft(), null);
        if (o.events("GRANT").isEmpty()) {
            r.failures.add("no grant at all: the owners made no progress");
        }
    }

    private static long perMinute(long count, long nanos) {
        return nanos <= 0 ? 0 : count * 60_000_000_000L / nanos;
    }
}
