package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code disco holders NAME}: who holds and who waits, in queue order. */
@Command(
        name = "holders",
        mixinStandardHelpOptions = true,
        footer = {
            "%n"
                    + "Lists the holders, then the waiters in queue order (etcd: by CreateRevision; ZooKeeper: by sequence; "
                    + "Redis: by the queue's score), "
                    + "from one consistent read, without a lease or a node: key, lease (ZooKeeper: the session id; Redis: the "
                    + "owner id), TTL left ('?' on ZooKeeper, which tells no client another session's time left; on Redis "
                    + "the claim keys' TTL, renewed together per owner), fencing token ('?' "
                    + "where the cluster's state does not give it: on etcd a writer of a read/write lock, a lock holder of "
                    + "another client that waited; on ZooKeeper a writer or a semaphore lease of Curator's recipes), and "
                    + "the holder metadata this library writes (host, pid, client id, thread, claimed-at).",
            "%n" + ExitCode.FOOTER
        },
        description = "Show who holds NAME and who waits for it.")
final class HoldersCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(
            paramLabel = "NAME",
            description = "the lock, read/write lock, semaphore or election name, e.g. /locks/orders")
    String name;

    @Mixin
    PrimitiveOption primitive;

    @Spec
    CommandSpec spec;

    /** The line under the table when keys of nested names lie under {@code name/}. */
    static String nestedNote(Primitive kind, String name, long keys, List<String> nested) {
        return keys + " key" + (keys == 1 ? "" : "s") + " of nested name" + (nested.size() == 1 ? "" : "s")
                + " (role nested): "
                + "never " + name + "'s holders, and disco break " + name + " leaves them (unless named with --holder);"
                + (kind == Primitive.LOCK || kind == Primitive.ELECTION
                        ? " a claimant of " + name + " that queued after one waits for it;"
                        : "")
                + " see "
                + nested.stream().map(n -> "disco holders " + n).collect(java.util.stream.Collectors.joining(", "));
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        NameArgument.check(name, spec.commandLine().getErr(), connection.kind());
        try (Cluster cluster = connection.open()) {
            Primitive kind = primitive.resolve(cluster, name);
            List<Claimant> claimants = cluster.claimants(kind, name);
            List<Claimant> own = claimants.stream()
                    .filter(c -> cluster.isClaimOf(kind, name, c.key()))
                    .toList();
            List<String> nested = ClaimantTable.nested(cluster, kind, name, claimants);
            if (own.isEmpty() && nested.isEmpty()) {
                throw new CliFailure(
                        ExitCode.NOTHING_HELD,
                        "nothing holds or waits for " + KeyLayout.label(kind) + " " + name
                                + (kind == Primitive.RWLOCK || kind == Primitive.SEMAPHORE
                                        ? " (its markers are left: see disco leftovers)"
                                        : ""));
            }
            long holders =
                    own.stream().filter(c -> c.role() == Claimant.Role.HOLDER).count();
            out.printf(
                    "%s %s: %d holding, %d waiting%s%n",
                    KeyLayout.label(kind),
                    name,
                    holders,
                    own.size() - holders,
                    primitive.given == null
                            ? " (kind found from its " + (cluster instanceof ZooKeeper ? "nodes" : "keys")
                                    + "; --primitive to name it)"
                            : "");
            ClaimantTable.print(out, cluster, kind, name, claimants);
            if (!nested.isEmpty()) {
                out.println(nestedNote(kind, name, claimants.size() - own.size(), nested));
            }
            if (own.isEmpty()) {
                out.flush();
                throw new CliFailure(
                        ExitCode.NOTHING_HELD,
                        "nothing holds or waits for " + KeyLayout.label(kind) + " " + name + " itself; the keys under "
                                + name + "/ are of nested names: " + String.join(", ", nested));
            }
            return ExitCode.OK;
        }
    }
}
