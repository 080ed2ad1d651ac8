package io.disco.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The checkers of one run, over the resource's history, the owners' logs and the nemesis' faults.
 * Each figure is a count; the safety ones must be zero.
 */
final class Checkers {

    /** One fault the nemesis injected, on the shared monotonic clock; {@code target} is an owner id or a member. */
    record Fault(String type, String target, long startNanos, long endNanos) {
    }

    /**
     * An owner's hold of the lock as it reported it: from its GRANT to the first of RELEASING (it calls
     * unlock, its last write done), LOST, DONE or EXIT ({@code end}).
     */
    record Hold(String owner, long token, long fromNanos, long toNanos, String end) {
    }

    final Map<String, Long> figures = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();

    private void safety(String name, long count, String detail) {
        figures.put(name, count);
        if (count > 0) {
            failures.add(name + ": " + count + (detail == null ? "" : " (" + detail + ")"));
        }
    }

    /**
     * @param history the resource's lines: {@code nanos op owner token outcome expect value previous}
     * @param ownerLines the owners' lines: {@code nanos owner EVENT args}
     * @param faults what the nemesis did
     * @param keysLeft keys under the lock's name after every owner closed
     */
    Checkers(List<String> history, List<String> ownerLines, List<Fault> faults, long keysLeft) {
        // 1. Lost updates: every accepted write read the value the previous accepted write left.
        long accepted = 0;
        long lost = 0;
        long last = 0;
        String firstLost = null;
        // 2. Tokens at the resource never decrease; no two owners write with one token.
        long decreases = 0;
        long maxToken = 0;
        Map<Long, String> writerOf = new HashMap<>();
        long shared = 0;
        long rejected = 0;
        for (String line : history) {
            String[] f = line.split(" ");
            if (f.length < 8) {
                continue;
            }
            long token = Long.parseLong(f[3]);
            if (!f[4].equals("ok")) {
                rejected++;
                continue;
            }
            if (token < maxToken) {
                decreases++;
            }
            maxToken = Math.max(maxToken, token);
            if (f[1].equals("W")) {
                accepted++;
                long expect = Long.parseLong(f[5]);
                last = Long.parseLong(f[6]);
                if (expect != Long.parseLong(f[7])) {
                    lost++;
                    if (firstLost == null) {
                        firstLost = line;
                    }
                }
                String other = writerOf.putIfAbsent(token, f[2]);
                if (other != null && !other.equals(f[2])) {
                    shared++;
                }
            }
        }
        safety("lost updates", lost + (last == accepted ? 0 : 1), firstLost == null && last != accepted
                ? "final value " + last + " after " + accepted + " accepted writes" : firstLost);
        safety("tokens decreasing at the resource", decreases, null);
        safety("one token written by two owners", shared, null);
        figures.put("accepted writes", accepted);
        figures.put("rejected operations", rejected);

        // 3. Grants: tokens unique, and rising per owner.
        Map<String, Long> lastGrant = new HashMap<>();
        Map<Long, String> grantedTo = new HashMap<>();
        long duplicate = 0;
        long falling = 0;
        List<Hold> holds = new ArrayList<>();
        Map<String, long[]> open = new HashMap<>(); // owner -> {token, from}
        for (String line : ownerLines) {
            String[] f = line.split(" ");
            if (f.length < 3) {
                continue;
            }
            long nanos = Long.parseLong(f[0]);
            String owner = f[1];
            switch (f[2]) {
                case "GRANT" -> {
                    long token = Long.parseLong(f[3]);
                    if (grantedTo.putIfAbsent(token, owner) != null) {
                        duplicate++;
                    }
                    Long prev = lastGrant.put(owner, token);
                    if (prev != null && prev >= token) {
                        falling++;
                    }
                    open.put(owner, new long[] {token, nanos});
                }
                case "RELEASING", "LOST", "DONE", "EXIT" -> {
                    long[] o = open.remove(owner);
                    if (o != null) {
                        holds.add(new Hold(owner, o[0], o[1], nanos, f[2]));
                    }
                }
                default -> {
                }
            }
        }
        figures.put("owner errors (sessions that could not open, failed calls)",
                ownerLines.stream().filter(l -> l.split(" ").length > 2 && l.split(" ")[2].equals("ERROR")).count());
        safety("a token granted twice", duplicate, null);
        safety("grant tokens not rising per owner", falling, null);
        figures.put("grants", (long) grantedTo.size());

        // 4. Overlapping holds as the owners reported them; safe only when the earlier owner was frozen (a
        // paused process cannot run its own expiry check). A partitioned owner must see done() first.
        long overlaps = 0;
        long unexplained = 0;
        List<Long> doneToGrantMs = new ArrayList<>();
        for (int i = 0; i < holds.size(); i++) {
            for (int j = 0; j < holds.size(); j++) {
                Hold a = holds.get(i);
                Hold b = holds.get(j);
                if (a.owner.equals(b.owner) || a.token >= b.token || a.toNanos <= b.fromNanos || b.toNanos <= a.fromNanos) {
                    continue;
                }
                overlaps++;
                boolean cutOff = faults.stream().anyMatch(x -> x.type.equals("freeze-owner")
                        && x.target.equals(a.owner) && x.startNanos < b.fromNanos && x.endNanos > a.fromNanos);
                if (!cutOff) {
                    unexplained++;
                    failures.add("overlap: " + a + " and " + b);
                }
            }
        }
        figures.put("overlapping holds (earlier owner frozen)", overlaps - unexplained);
        safety("overlapping holds, earlier owner not frozen", unexplained, null);
        // A partitioned owner that held the lock must see done() before any other owner is granted it.
        for (Fault x : faults) {
            if (!x.type.equals("partition-owner")) {
                continue;
            }
            long lastToken = -1;
            long doneAt = -1;
            for (String line : ownerLines) {
                String[] f = line.split(" ");
                if (f.length < 3 || !f[1].equals(x.target)) {
                    continue;
                }
                long nanos = Long.parseLong(f[0]);
                if (f[2].equals("GRANT") && nanos < x.startNanos) {
                    lastToken = Long.parseLong(f[3]);
                } else if (f[2].equals("DONE") && nanos >= x.startNanos && doneAt < 0) {
                    doneAt = nanos;
                }
            }
            long held = lastToken;
            long done = doneAt;
            if (held < 0 || done < 0) {
                continue; // it held nothing, or kept its lease through the partition
            }
            holds.stream().filter(h -> !h.owner.equals(x.target) && h.token > held && h.fromNanos > x.startNanos)
                    .mapToLong(Hold::fromNanos).min()
                    .ifPresent(next -> doneToGrantMs.add((next - done) / 1_000_000));
        }
        doneToGrantMs.sort(null);
        figures.put("partitioned owners' done() to the next grant, ms (min; -1: none)",
                doneToGrantMs.isEmpty() ? -1 : doneToGrantMs.get(0));
        figures.put("partitioned owners' done() to the next grant, ms (median)",
                doneToGrantMs.isEmpty() ? -1 : doneToGrantMs.get(doneToGrantMs.size() / 2));
        safety("partitioned owners whose done() came after the next grant",
                doneToGrantMs.stream().filter(ms -> ms < 0).count(), null);

        // 5. Nothing left behind.
        safety("keys left after every owner closed", keysLeft, null);
    }

    boolean passed() {
        return failures.isEmpty();
    }
}
