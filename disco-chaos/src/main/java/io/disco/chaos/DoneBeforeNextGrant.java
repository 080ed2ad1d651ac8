package io.disco.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * Checker 4, second part: an owner cut off from etcd while holding a grant must hear of its loss
 * ({@code done()}, logged {@code DONE}) before any other owner is granted the same register. The
 * time from that {@code DONE} to the next grant must be positive; its distribution is reported. Only
 * a hold that its loss ended counts: a holder that gave its grant up first (its task or critical
 * section ended while it was cut off) needs no signal, and a later {@code DONE} of the same owner
 * belongs to a later grant.
 */
final class DoneBeforeNextGrant implements Checker {

    @Override
    public void check(Observations o, Report r) {
        List<Observations.Hold> holds = o.holds();
        List<Long> gapsMs = new ArrayList<>();
        for (Observations.Fault x : o.faults()) {
            if (!x.type().equals("partition-owner")) {
                continue;
            }
            // the grant it held when cut off, ended by its loss signal (DONE, or LOST from a call)
            Observations.Hold held = holds.stream()
                    .filter(h -> Observations.process(h.owner()).equals(x.target())
                            && h.fromNanos() < x.startNanos()
                            && h.toNanos() > x.startNanos())
                    .findFirst()
                    .orElse(null);
            if (held == null || !(held.end().equals("DONE") || held.end().equals("LOST"))) {
                continue; // kept its lease through the partition, or gave the grant up itself (RELEASING, CLOSING)
            }
            long done = held.toNanos();
            holds.stream()
                    .filter(h -> !Observations.process(h.owner()).equals(x.target())
                            && h.key().equals(held.key())
                            && h.token() > held.token()
                            && h.fromNanos() > x.startNanos()
                            && !(h.shared() && held.shared()))
                    .mapToLong(Observations.Hold::fromNanos)
                    .min()
                    .ifPresent(next -> gapsMs.add((next - done) / 1_000_000));
        }
        gapsMs.sort(null);
        r.figure(
                "partitioned holders' done() to the next grant, ms (min; -1: none)",
                gapsMs.isEmpty() ? -1 : gapsMs.get(0));
        r.figure(
                "partitioned holders' done() to the next grant, ms (median)",
                gapsMs.isEmpty() ? -1 : gapsMs.get(gapsMs.size() / 2));
        r.safety(
                "partitioned holders whose done() came after the next grant",
                gapsMs.stream().filter(ms -> ms < 0).count(),
                null);
    }
}
