package io.disco.chaos;

import java.util.HashMap;
import java.util.Map;

/**
 * Checker 1, lost updates: replaying the resource's history register by register, every accepted
 * write read the value the previous accepted write left, and each register's final value equals the
 * number of writes it accepted (every write adds one).
 */
final class LostUpdates implements Checker {

    @Override
    public void check(Observations o, Report r) {
        long accepted = 0;
        long lost = 0;
        String first = null;
        Map<String, long[]> perKey = new HashMap<>(); // key -> {accepted writes, last value}
        for (Observations.Op op : o.ops()) {
            if (!op.write() || !op.accepted()) {
                continue;
            }
            accepted++;
            long[] k = perKey.computeIfAbsent(op.key(), x -> new long[2]);
            k[0]++;
            k[1] = op.value();
            if (op.expect() != op.previous()) {
                lost++;
                first = first == null ? op.toString() : first;
            }
        }
        for (Map.Entry<String, long[]> e : perKey.entrySet()) {
            if (e.getValue()[0] != e.getValue()[1]) {
                lost++;
                first = first == null
                        ? e.getKey() + ": final value " + e.getValue()[1] + " after " + e.getValue()[0]
                                + " accepted writes"
                        : first;
            }
        }
        r.safety("lost updates", lost, first);
        r.figure("accepted writes", accepted);
        r.figure(
                "rejected operations (stale token)",
                o.ops().stream()
                        .filter(x -> !x.accepted() && !x.owner().equals(Hostile.ID))
                        .count());
    }
}
