package io.disco.chaos;

import java.util.List;

/**
 * Checker 5, no owner hung: every blocking call of an owner is bounded (an acquisition by 10 s, a
 * resource call by 5 s, a request to etcd or ZooKeeper by the owners' request timeout, 1 s) and followed by
 * an event, so an owner (a process, or a thread of the client workload) silent for
 * longer than {@link #BOUND_NANOS}, not counting the time it was frozen, is stuck in a call that does
 * not return. Also printed: the time from each fault's healing to the next grant.
 */
final class Silence implements Checker {

    static final long BOUND_NANOS = 30_000_000_000L;

    @Override
    public void check(Observations o, Report r) {
        long hung = 0;
        String first = null;
        List<String> owners =
                o.events().stream().map(Observations.Event::owner).distinct().toList();
        for (String owner : owners) {
            long last = -1;
            List<Observations.Event> mine = o.events().stream()
                    .filter(e -> e.owner().equals(owner) && !e.type().equals("CLOCK"))
                    .toList();
            for (int i = 0; i <= mine.size(); i++) {
                long at = i < mine.size() ? mine.get(i).nanos() : o.endNanos();
                if (i == mine.size()
                        && !mine.isEmpty()
                        && mine.get(i - 1).type().equals("EXIT")) {
                    break;
                }
                if (last >= 0 && at - last - frozen(o, owner, last, at) > BOUND_NANOS) {
                    hung++;
                    first = first == null
                            ? owner + " silent for " + (at - last) / 1_000_000 + " ms after "
                                    + (i > 0 ? mine.get(i - 1) : "its start")
                            : first;
                }
                last = at;
            }
        }
        r.safety("owners silent past " + BOUND_NANOS / 1_000_000_000 + " s (hung in a call)", hung, first);
        List<Long> heal = o.faults().stream()
                .mapToLong(x -> o.events("GRANT").stream()
                        .filter(g -> g.nanos() > x.endNanos())
                        .mapToLong(g -> (g.nanos() - x.endNanos()) / 1_000_000)
                        .findFirst()
                        .orElse(-1))
                .filter(ms -> ms >= 0)
                .sorted()
                .boxed()
                .toList();
        r.figure("a fault's healing to the next grant, ms (median)", heal.isEmpty() ? -1 : heal.get(heal.size() / 2));
        r.figure("a fault's healing to the next grant, ms (max)", heal.isEmpty() ? -1 : heal.get(heal.size() - 1));
    }

    private static long frozen(Observations o, String owner, long from, long to) {
        return o.faults().stream()
                .filter(x -> x.type().equals("freeze-owner") && x.target().equals(Observations.process(owner)))
                .mapToLong(x -> Math.max(0, Math.min(to, x.endNanos()) - Math.max(from, x.startNanos())))
                .sum();
    }
}
