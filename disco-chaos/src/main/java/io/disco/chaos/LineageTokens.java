package io.disco.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * On Redis, where a token is assigned by the script that grants it (so tokens rise in grant order on one primary), and
 * every promoted primary issues above every earlier lineage: no grant's token is below one granted at least a TTL
 * before it, on the same register, by any owner. A stale primary's grant that was handed out, or a promoted server
 * issuing in an earlier epoch (the known limit of docs/redis.md), would show here as a later grant below an earlier
 * one, even when no owner saw its own tokens fall and the resource never took both. The TTL of slack covers a grant
 * whose reply came late (its {@code WAIT}, a slow link): within it, grant order and token order may differ. Shared
 * grants of one read phase share their token and never count.
 */
final class LineageTokens implements Checker {

    private final long ttlNanos;

    /** @param ttlNanos the owners' TTL: the slack between two grants' order and their tokens' */
    LineageTokens(long ttlNanos) {
        this.ttlNanos = ttlNanos;
    }

    @Override
    public void check(Observations o, Report r) {
        Map<String, List<Observations.Event>> byKey = new HashMap<>();
        for (Observations.Event e : o.events("GRANT")) {
            byKey.computeIfAbsent(e.args().get(1), k -> new ArrayList<>()).add(e);
        }
        long below = 0;
        String first = null;
        for (List<Observations.Event> grants : byKey.values()) {
            grants.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
            long max = Long.MIN_VALUE;
            Observations.Event maxAt = null;
            int older = 0;
            for (Observations.Event e : grants) {
                while (older < grants.size() && grants.get(older).nanos() <= e.nanos() - ttlNanos) {
                    if (grants.get(older).token() > max) {
                        max = grants.get(older).token();
                        maxAt = grants.get(older);
                    }
                    older++;
                }
                if (e.token() < max) {
                    below++;
                    first = first == null ? e + " below " + maxAt : first;
                }
            }
        }
        r.safety(
                "tokens below one granted a TTL or more earlier (Redis: a lineage below an earlier one)", below, first);
    }
}
