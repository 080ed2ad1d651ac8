package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code disco holders NAME}: who holds and who waits, in queue order. */
@Command(name = "holders", mixinStandardHelpOptions = true, footer = {"%n" + "Lists the holders, then the waiters in queue order (by CreateRevision), from one consistent read, "
            + "without a lease: key, lease, TTL left, fencing token ('?' where etcd's state does not give it: a "
            + "writer of a read/write lock, a lock holder of another client that waited), and the holder metadata "
            + "this library writes (host, pid, client id, thread, claimed-at).", "%n" + ExitCode.FOOTER},
        description = "Show who holds NAME and who waits for it.")
final class HoldersCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(paramLabel = "NAME", description = "the lock, read/write lock, semaphore or election name, e.g. /locks/orders")
    String name;

    @Option(names = "--primitive", paramLabel = "KIND",
            description = "lock, rwlock, semaphore or election (default: found from the keys present)")
    Primitive primitive;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (Etcd etcd = connection.open()) {
            Primitive kind = KeyLayout.resolve(etcd, name, primitive);
            List<Claimant> claimants = etcd.claimants(kind, name);
            if (claimants.isEmpty()) {
                throw new CliFailure(ExitCode.NOTHING_HELD, "nothing holds or waits for " + KeyLayout.label(kind) + " " + name
                        + (kind == Primitive.RWLOCK || kind == Primitive.SEMAPHORE ? " (its markers are left: see disco leftovers)" : ""));
            }
            long holders = claimants.stream().filter(c -> c.role() == Claimant.Role.HOLDER).count();
            out.printf("%s %s: %d holding, %d waiting%s%n", KeyLayout.label(kind), name, holders, claimants.size() - holders,
                    primitive == null ? " (kind found from its keys; --primitive to name it)" : "");
            ClaimantTable.print(out, etcd, kind, claimants);
            return ExitCode.OK;
        }
    }
}
