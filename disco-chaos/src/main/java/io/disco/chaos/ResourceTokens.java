package io.disco.chaos;

import java.util.HashMap;
import java.util.Map;

/**
 * Checker 2, tokens at the resource: per register, the tokens of accepted operations never decrease
 * in the order the resource admitted them, and no two owners wrote with one token (readers of one
 * phase share their token, but readers do not write).
 */
final class ResourceTokens implements Checker {

    @Override
    public void check(Observations o, Report r) {
        Map<String, Long> mark = new HashMap<>();
        Map<String, String> writerOf = new HashMap<>(); // key + token -> owner
        long decreases = 0;
        long shared = 0;
        String firstDecrease = null;
        for (Observations.Op op : o.ops()) {
            if (!op.accepted()) {
                continue;
            }
            Long before = mark.put(op.key(), Math.max(op.token(), mark.getOrDefault(op.key(), 0L)));
            if (before != null && op.token() < before) {
                decreases++;
                firstDecrease = firstDecrease == null ? op + " after " + before : firstDecrease;
            }
            if (op.write()) {
                String other = writerOf.putIfAbsent(op.key() + " " + op.token(), op.owner());
                if (other != null && !other.equals(op.owner())) {
                    shared++;
                }
            }
        }
        r.safety("tokens decreasing at the resource", decreases, firstDecrease);
        r.safety("one token written by two owners", shared, null);
    }
}
