package io.disco.chaos;

import java.util.HashMap;
import java.util.Map;

/**
 * Checker 3, grant order: no exclusive grant's token was granted before (shared grants of one read
 * phase share theirs), and each owner's tokens rise from grant to grant (a reader may be granted its
 * phase's token again).
 */
final class GrantTokens implements Checker {

    @Override
    public void check(Observations o, Report r) {
        Map<Long, String> modeOf = new HashMap<>();
        Map<String, Long> lastOf = new HashMap<>();
        long duplicate = 0;
        long falling = 0;
        String first = null;
        for (Observations.Event e : o.events("GRANT")) {
            long token = e.token();
            String mode = e.args().get(2);
            String before = modeOf.putIfAbsent(token, mode);
            if (before != null && !(before.equals(Observations.SHARED) && mode.equals(Observations.SHARED))) {
                duplicate++;
                first = first == null ? e.toString() : first;
            }
            Long prev = lastOf.put(e.owner(), token);
            if (prev != null && (prev > token || prev == token && !mode.equals(Observations.SHARED))) {
                falling++;
                first = first == null ? e + " after " + prev : first;
            }
        }
        r.figure("grants", o.events("GRANT").size());
        r.safety("a token granted twice", duplicate, first);
        r.safety("grant tokens not rising per owner", falling, first);
    }
}
