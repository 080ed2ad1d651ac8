package io.disco.cli;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Primitive;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Prints claimants as a table: role, position, key, lease, TTL left, token, the name the key belongs to (the
 * listed name, or a name nested under it), who (and, for a holder, since when it holds: {@code held-since}, next
 * to {@code claimed-at}, when its claim was made). The TTL is read once per lease ({@link Cluster#ttlLeft}: on etcd
 * {@code etcdctl lease timetolive}; {@code ?} on ZooKeeper). The same columns on every backend.
 */
final class ClaimantTable {

    private ClaimantTable() {}

    static void print(PrintWriter out, Cluster cluster, Primitive primitive, String name, List<Claimant> claimants) {
        Map<Long, String> ttls = new HashMap<>();
        for (Claimant c : claimants) {
            ttls.computeIfAbsent(c.leaseId(), cluster::ttlLeft);
        }
        int nameWidth = Math.max(
                4,
                claimants.stream()
                        .mapToInt(c -> cluster.nameOf(primitive, name, c.key()).length())
                        .max()
                        .orElse(4));
        int keyWidth = Math.max(
                3, claimants.stream().mapToInt(c -> c.key().length()).max().orElse(3));
        // NAME after TOKEN: the columns before it are those the runbook's examples (and etcdctl users' scripts) read
        String format = "%-13s %3s  %-" + keyWidth + "s  %-16s  %7s  %-7s  %-" + nameWidth + "s  %s%n";
        out.printf(format, "ROLE", "POS", "KEY", "LEASE", "TTL", "TOKEN", "NAME", "HOLDER");
        for (Claimant c : claimants) {
            boolean own = cluster.isClaimOf(primitive, name, c.key());
            out.printf(
                    format,
                    role(primitive, own, c),
                    c.position(),
                    c.key(),
                    lease(c.leaseId()),
                    ttls.get(c.leaseId()),
                    own ? token(primitive, c) : "-",
                    cluster.nameOf(primitive, name, c.key()),
                    who(c));
        }
    }

    /** The distinct nested names whose keys are among {@code claimants}, in queue order. */
    static List<String> nested(Cluster cluster, Primitive primitive, String name, List<Claimant> claimants) {
        return claimants.stream()
                .filter(c -> !cluster.isClaimOf(primitive, name, c.key()))
                .map(c -> cluster.nameOf(primitive, name, c.key()))
                .distinct()
                .toList();
    }

    /**
     * {@code holder}/{@code waiter}; {@code leader}/{@code candidate}; with {@code :read}/{@code :write} for a read/write
     * lock; {@code nested} for a key of a name nested under the listed name ({@code own} false: never its holder, though
     * a claimant of it that queued after one waits for it).
     */
    static String role(Primitive primitive, boolean own, Claimant c) {
        if (!own) {
            return "nested";
        }
        boolean holds = c.role() == Claimant.Role.HOLDER;
        String role =
                primitive == Primitive.ELECTION ? (holds ? "leader" : "candidate") : (holds ? "holder" : "waiter");
        if (primitive == Primitive.RWLOCK) {
            role += c.mode() == Claimant.Mode.SHARED ? ":read" : ":write";
        }
        return role;
    }

    static String lease(long id) {
        return id == 0 ? "-" : Long.toHexString(id);
    }

    /**
     * The holder's token; "recording" for a lock holder of this library that waited and has not recorded its token
     * yet (it does once its hold has lasted 50 ms); "?" where the state does not give it.
     */
    static String token(Primitive primitive, Claimant c) {
        if (c.role() == Claimant.Role.WAITER) {
            return "-";
        }
        String unknown = primitive == Primitive.LOCK && c.madeByDisco().isPresent() ? "recording" : "?";
        return c.token().map(t -> Long.toString(t.value())).orElse(unknown);
    }

    /** The holder metadata this library writes, or what the value is. */
    static String who(Claimant c) {
        ClaimMetadata m = c.metadata();
        switch (m.source()) {
            case DISCO:
                return "host=" + m.host() + " pid=" + m.pid()
                        + (m.clientId().isEmpty() ? "" : " client=" + m.clientId()) + " thread=" + m.thread() + since(c)
                        + m.claimedAt().map(t -> " claimed-at=" + t).orElse("");
            case EMPTY:
                return (c.value().isEmpty() ? "(empty value: etcdctl or a Go program)" : "value=" + c.value())
                        + since(c);
            default:
                return "value=" + abbreviate(c.value()) + since(c);
        }
    }

    /**
     * A holder's {@code held-since} (when the hold began, {@code ?} where etcd's state does not keep it: a claim
     * that waited without recording it, a writer, a permit, a leader); nothing for a waiter.
     */
    static String since(Claimant c) {
        if (c.role() == Claimant.Role.WAITER) {
            return "";
        }
        return " held-since=" + c.heldSince().map(Object::toString).orElse("?");
    }

    private static String abbreviate(String value) {
        String oneLine = value.replace('\n', ' ');
        return oneLine.length() <= 80 ? oneLine : oneLine.substring(0, 77) + "...";
    }
}
