package io.disco.chaos;

import java.util.List;

/**
 * Liveness per fault kind, printed and never a failure: the longest time without any grant while a
 * fault of the kind ran (from its start, between grants, to its healing), and the longest time from
 * the healing of one of its faults to the next grant ({@code -1}: the kind was not dealt).
 */
final class FaultLiveness implements Checker {

    @Override
    public void check(Observations o, Report r) {
        List<Long> grants = o.events("GRANT").stream()
                .map(Observations.Event::nanos)
                .sorted()
                .toList();
        for (String type : Nemesis.KINDS) {
            List<Observations.Fault> ofType =
                    o.faults().stream().filter(x -> x.type().equals(type)).toList();
            long gap = -1;
            long heal = -1;
            for (Observations.Fault x : ofType) {
                long last = x.startNanos();
                for (long g : grants) {
                    if (g > x.startNanos() && g < x.endNanos()) {
                        gap = Math.max(gap, g - last);
                        last = g;
                    }
                }
                gap = Math.max(gap, x.endNanos() - last);
                long next = grants.stream()
                        .filter(g -> g > x.endNanos())
                        .findFirst()
                        .orElse(-1L);
                if (next > 0) {
                    heal = Math.max(heal, next - x.endNanos());
                }
            }
            r.figure("longest gap between grants during " + type + ", ms (-1: none)", gap < 0 ? -1 : gap / 1_000_000);
            r.figure(type + " healed to the next grant, ms (max; -1: none)", heal < 0 ? -1 : heal / 1_000_000);
        }
    }
}
