package io.disco.cli;

import io.disco.core.Primitive;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * {@code disco leftovers [PREFIX]} on ZooKeeper: the nodes this library (and Curator's recipes on the same paths)
 * leave that no live holder uses, under the names starting with PREFIX:
 * <ul>
 *   <li>{@code rwlock-phase}: a read/write lock's phase marker {@code /disco-rwlock-phase<name>} (persistent: only a
 *       disco writer's admission deletes it, so it stays after the last reader) when no reader or writer holds or
 *       waits for the name;</li>
 *   <li>{@code semaphore-limit}, {@code semaphore-slot} and {@code semaphore-dir}: an idle semaphore's recorded limit
 *       {@code <name>/limit}, its slots {@code <name>/slots/<i>} (persistent: a release only empties its slot) and its
 *       empty directories ({@code <name>/slots}, the queue {@code <name>/leases}, {@code InterProcessSemaphoreV2}'s
 *       mutex {@code <name>/locks}), when no permit is held or waited for;</li>
 *   <li>{@code break-record}: a record of {@code disco break} ({@code /disco-broken<node>}) older than
 *       {@link BreakRecord#TTL_SECONDS} (by its ctime and this host's clock), past the time {@code disco watch} reads
 *       it;</li>
 *   <li>{@code empty-dir}: a directory of the phase markers' or the records' trees with nothing but leftovers in
 *       it.</li>
 * </ul>
 * A name's own directory, and those above it, are Curator's containers, which ZooKeeper deletes itself once they are
 * empty (its container sweep, every minute by default); ZooKeeper shows a container to clients as a plain node, so
 * the tool cannot tell an empty one from a node of the application, and leaves them to the sweep.
 *
 * <p>{@code --delete} deletes them deepest first, each guarded on its version (a node that changed since it was read
 * is kept) and a directory also on being empty (ZooKeeper refuses to delete a node with children). An idle
 * semaphore's nodes go in one transaction that also deletes its queue directory {@code <name>/leases} (or creates and
 * deletes it when it is gone): it fails, and deletes nothing, if a holder's node appeared meanwhile, so a semaphore in
 * use never loses its limit or a slot. A phase marker has the caveat of etcd's: a reader that joins between the check
 * and the delete keeps the old marker's token, and is fenced out once a newer reader's token is seen.
 */
final class ZkLeftovers {

    /** One node nobody uses. */
    private record Leftover(String kind, String path, int version, String why) {}

    private final ZooKeeper zk;
    private final String prefix;
    private final List<Leftover> found = new ArrayList<>();
    private final Set<String> left = new HashSet<>();
    /** The leftovers deleted together: an idle semaphore's, by its name. */
    private final Map<String, List<Leftover>> semaphores = new LinkedHashMap<>();

    private ZkLeftovers(ZooKeeper zk, String prefix) {
        this.zk = zk;
        this.prefix = prefix;
    }

    /** Lists what is left under {@code prefix}, and with {@code delete} deletes it. */
    static int run(ZooKeeper zk, String prefix, boolean delete, PrintWriter out) {
        if (!prefix.isEmpty() && !prefix.startsWith("/")) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "PREFIX '" + prefix + "' is not the start of a ZooKeeper path: begin it with '/', such as /locks/");
        }
        ZkLeftovers l = new ZkLeftovers(zk, prefix);
        l.find();
        return l.report(delete, out);
    }

    private void find() {
        String base = ZkTree.base(prefix);
        String below = "/".equals(base) ? "" : base;
        Map<String, ZkTree.Node> names = ZkTree.read(zk, base, ZkTree.towards(prefix));
        for (ZkTree.Node n : names.values()) {
            String name = n.path();
            if (!"/".equals(name)
                    && name.startsWith(prefix)
                    && ZkLayout.kind(name, n.children(), false)
                            .filter(k -> k == Primitive.SEMAPHORE)
                            .isPresent()) {
                semaphore(name, names);
            }
        }
        String phaseRoot = ZooKeeperNodes.PHASE_ROOT;
        for (ZkTree.Node n : deepestFirst(ZkTree.read(zk, phaseRoot + below, ZkTree.towards(phaseRoot + prefix)))) {
            String name = n.path().equals(phaseRoot) ? "" : n.path().substring(phaseRoot.length());
            if (!name.startsWith(prefix) || !onlyLeftovers(n)) {
                continue;
            }
            boolean marker = !name.isEmpty() && ZooKeeperNodes.isPhaseMarker(n.stat());
            // a directory may be the marker of a name with nested markers under it: no claimant of it either
            if (!name.isEmpty() && !zk.claimants(Primitive.RWLOCK, name).isEmpty()) {
                continue;
            }
            add(new Leftover(
                    marker ? "rwlock-phase" : "empty-dir",
                    n.path(),
                    n.stat().getVersion(),
                    marker
                            ? "no reader or writer holds or waits"
                            : "a directory of phase markers, with none in use in it"));
        }
        String breakRoot = ZooKeeperNodes.BREAK_ROOT;
        long now = System.currentTimeMillis();
        for (ZkTree.Node n : deepestFirst(ZkTree.read(zk, breakRoot + below, ZkTree.towards(breakRoot + prefix)))) {
            String node = n.path().equals(breakRoot) ? "" : n.path().substring(breakRoot.length());
            if (!node.startsWith(prefix)) {
                continue;
            }
            long age = now - n.stat().getCtime();
            if (n.stat().getDataLength() > 0) { // a record: who broke it, and when
                if (n.children().isEmpty() && age > BreakRecord.TTL_SECONDS * 1000) {
                    add(new Leftover(
                            "break-record",
                            n.path(),
                            n.stat().getVersion(),
                            "disco break's record of " + node + ", "
                                    + Duration.ofMillis(age).toMinutes() + " min old (disco watch reads it for "
                                    + BreakRecord.TTL_SECONDS / 60 + " min)"));
                }
            } else if (onlyLeftovers(n)) {
                add(new Leftover(
                        "empty-dir",
                        n.path(),
                        n.stat().getVersion(),
                        "a directory of break records, with none younger than " + BreakRecord.TTL_SECONDS / 60
                                + " min in it"));
            }
        }
    }

    /** An idle semaphore's limit, slots and empty directories (none while a permit is held or waited for). */
    private void semaphore(String name, Map<String, ZkTree.Node> nodes) {
        if (!zk.claimants(Primitive.SEMAPHORE, name).isEmpty()) {
            return; // in use: its slots are its holders' and its next holders'
        }
        List<Leftover> parts = new ArrayList<>();
        ZkTree.Node slots = nodes.get(ZooKeeperNodes.semaphoreSlots(name));
        if (slots != null) {
            for (String slot : slots.childPaths()) {
                ZkTree.Node s = nodes.get(slot);
                if (s != null && s.persistent() && s.children().isEmpty()) {
                    parts.add(new Leftover(
                            "semaphore-slot", slot, s.stat().getVersion(), "no permit held or waited for"));
                }
            }
            if (parts.size() == slots.children().size()) {
                parts.add(dir(slots, "its slots' directory"));
            }
        }
        ZkTree.Node limit = nodes.get(ZooKeeperNodes.semaphoreLimit(name));
        if (limit != null && limit.persistent() && limit.children().isEmpty()) {
            byte[] value = zk.await(() -> zk.client().getData().forPath(limit.path()), "read of " + limit.path());
            parts.add(new Leftover(
                    "semaphore-limit",
                    limit.path(),
                    limit.stat().getVersion(),
                    "no permit held or waited for (limit " + new String(value, StandardCharsets.UTF_8) + ")"));
        }
        for (String dir : List.of(ZooKeeperNodes.semaphoreLeases(name), ZKPaths.makePath(name, "locks"))) {
            ZkTree.Node d = nodes.get(dir);
            if (d != null && d.children().isEmpty()) {
                parts.add(dir(
                        d,
                        dir.endsWith("/locks")
                                ? "the internal mutex's directory of Curator's InterProcessSemaphoreV2"
                                : "its queue's directory"));
            }
        }
        if (!parts.isEmpty()) {
            parts.forEach(this::add);
            semaphores.put(name, parts);
        }
    }

    private static Leftover dir(ZkTree.Node d, String what) {
        return new Leftover(
                "semaphore-dir", d.path(), d.stat().getVersion(), what + ": empty, no permit held or waited for");
    }

    private void add(Leftover l) {
        found.add(l);
        left.add(l.path());
    }

    /** Whether every child of {@code n} is a leftover (none: true). */
    private boolean onlyLeftovers(ZkTree.Node n) {
        return n.childPaths().stream().allMatch(left::contains);
    }

    private static List<ZkTree.Node> deepestFirst(Map<String, ZkTree.Node> nodes) {
        return nodes.values().stream()
                .sorted(Comparator.comparingInt((ZkTree.Node n) -> depth(n.path()))
                        .reversed())
                .toList();
    }

    private static int depth(String path) {
        return (int) path.chars().filter(ch -> ch == '/').count();
    }

    private int report(boolean delete, PrintWriter out) {
        if (found.isEmpty()) {
            out.println("no leftovers" + (prefix.isEmpty() ? "" : " under " + prefix));
            return ExitCode.OK;
        }
        List<Leftover> sorted =
                found.stream().sorted(Comparator.comparing(Leftover::path)).toList();
        int width = sorted.stream().mapToInt(l -> l.path().length()).max().orElse(3);
        String format = "%-15s  %-" + width + "s  %s%n";
        out.printf(format, "KIND", "KEY", "WHY");
        for (Leftover l : sorted) {
            out.printf(format, l.kind(), l.path(), l.why());
        }
        if (!delete) {
            out.printf(
                    "%d leftover%s; --delete deletes %s%n",
                    found.size(), found.size() == 1 ? "" : "s", found.size() == 1 ? "it" : "them");
            return ExitCode.OK;
        }
        int deleted = 0;
        int gone = 0;
        Set<String> done = new HashSet<>();
        List<Leftover> deepest = found.stream()
                .sorted(Comparator.comparingInt((Leftover l) -> depth(l.path()))
                        .reversed()
                        .thenComparing(Leftover::path))
                .toList();
        for (Leftover l : deepest) {
            if (done.contains(l.path())) {
                continue;
            }
            String semaphore = semaphores.entrySet().stream()
                    .filter(e -> e.getValue().contains(l))
                    .map(Map.Entry::getKey)
                    .findFirst()
                    .orElse(null);
            List<Leftover> unit = semaphore == null ? List.of(l) : semaphores.get(semaphore);
            unit.forEach(u -> done.add(u.path()));
            Outcome o = delete(semaphore, unit);
            deleted += o.deleted().size();
            gone += o.gone().size(); // deleted meanwhile: ZooKeeper's container sweep, or another operator
            o.gone().forEach(g -> out.println("gone already: " + g));
            if (o.kept() != null) {
                unit.stream()
                        .filter(u -> !o.gone().contains(u.path()))
                        .forEach(u -> out.println("kept " + u.path() + ": " + o.kept()));
            }
        }
        out.printf(
                "deleted %d of %d leftover%s%s%n",
                deleted, found.size(), found.size() == 1 ? "" : "s", gone == 0 ? "" : " (" + gone + " gone meanwhile)");
        return ExitCode.OK;
    }

    /** What one delete did: the nodes it deleted, those that were gone already, and why it kept the rest (or null). */
    private record Outcome(List<String> deleted, List<String> gone, String kept) {}

    /**
     * Deletes one leftover, or an idle semaphore's together, children first, in one transaction guarded on each node's
     * version and, for a semaphore, on its queue directory being empty (deleted with them) or absent (created and
     * deleted again). A node found gone is left out, and the rest deleted without it.
     */
    private Outcome delete(String semaphore, List<Leftover> unit) {
        CuratorFramework c = zk.client();
        return zk.await(
                () -> {
                    List<String> gone = new ArrayList<>();
                    String leases = semaphore == null ? null : ZooKeeperNodes.semaphoreLeases(semaphore);
                    for (int attempt = 0; ; attempt++) {
                        List<Leftover> there = new ArrayList<>();
                        for (Leftover u : unit) {
                            if (gone.contains(u.path())) {
                                continue;
                            }
                            if (c.checkExists().forPath(u.path()) == null) {
                                gone.add(u.path());
                            } else {
                                there.add(u);
                            }
                        }
                        there.sort(Comparator.comparingInt((Leftover u) -> depth(u.path()))
                                .reversed());
                        List<CuratorOp> ops = new ArrayList<>();
                        for (Leftover u : there) {
                            if (!u.path().equals(leases)) {
                                ops.add(c.transactionOp()
                                        .delete()
                                        .withVersion(u.version())
                                        .forPath(u.path()));
                            }
                        }
                        if (leases != null && c.checkExists().forPath(leases) != null) {
                            ops.add(c.transactionOp().delete().forPath(leases)); // fails while a holder's node is in it
                        } else if (leases != null) {
                            // gone: made and deleted again, which fails if a holder made it meanwhile
                            ops.add(c.transactionOp()
                                    .create()
                                    .withMode(CreateMode.PERSISTENT)
                                    .forPath(leases));
                            ops.add(c.transactionOp().delete().forPath(leases));
                        }
                        List<String> paths = there.stream().map(Leftover::path).toList();
                        if (there.isEmpty()) {
                            return new Outcome(List.of(), gone, null);
                        }
                        try {
                            c.transaction().forOperations(ops);
                            return new Outcome(paths, gone, null);
                        } catch (KeeperException.BadVersionException e) {
                            return new Outcome(List.of(), gone, "it changed since it was read");
                        } catch (KeeperException.NotEmptyException | KeeperException.NodeExistsException e) {
                            return new Outcome(
                                    List.of(),
                                    gone,
                                    leases != null && leases.equals(e.getPath())
                                            ? "a permit of " + semaphore + " is held or waited for now"
                                            : "it has children now");
                        } catch (KeeperException.NoNodeException e) {
                            if (attempt >= 2) {
                                return new Outcome(List.of(), gone, "its nodes kept going while it was deleted");
                            }
                            // one went between the check and the transaction (ZooKeeper's sweep): again without it
                        }
                    }
                },
                "guarded delete of " + unit.get(0).path());
    }
}
