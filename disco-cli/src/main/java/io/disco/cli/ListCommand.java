package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.etcd.EtcdKeys;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code disco list PREFIX}: the names in use at or under a prefix, one line each: name, kind, holders, waiters,
 * the holder's token and since when it holds. The keys are read in one Txn and grouped by name from their shape
 * (see {@link KeyLayout}: {@code <name>/<segment>}, a read/write lock's {@code <name>/read/<segment>} and
 * {@code <name>/write/<segment>}, and the markers {@code disco-rwlock-phase:<name>},
 * {@code disco-semaphore-limit:<name>}, {@code disco-semaphore-slot:<name>/<i>}); then each name's claimants are
 * listed as {@code disco holders} lists them. A lock named {@code <x>/read} or {@code <x>/write} reads as the
 * read/write lock {@code <x>}: {@code disco holders NAME --primitive lock} names it. On ZooKeeper the names are found
 * by walking the nodes at and under the prefix ({@link ZkNames}), on Redis by a {@code SCAN} of the keys
 * ({@link RedisNames}).
 */
@Command(
        name = "list",
        mixinStandardHelpOptions = true,
        footer = {
            "%n" + "One line per name at or under PREFIX (PREFIX itself, PREFIX/...; '/' for every name "
                    + "beginning with '/'), in name order: kind (as disco holders finds it), holders and waiters of the name "
                    + "itself, the holder's token (several: the highest; '?' where the cluster's state does not give it) and "
                    + "when the earliest hold began ('?' where it is not kept: always on ZooKeeper). A name with markers only "
                    + "(a read/write lock's phase marker, a semaphore's limit record) and no claimant is shown with 0 0: "
                    + "disco leftovers finds them. On ZooKeeper the names are found by walking the nodes under PREFIX; "
                    + "on Redis by a SCAN of the keys disco:* (a name with a queue, a claim, or a limit or read phase "
                    + "in its token record).",
            "%n" + ExitCode.FOOTER
        },
        description = "List the names in use at or under PREFIX: kind, holders, waiters, token, held since.")
final class ListCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(paramLabel = "PREFIX", description = "a name or the start of names, for example /locks ('/' for all)")
    String prefix;

    @Spec
    CommandSpec spec;

    /** What was read of one name. */
    private static final class Found {
        final List<KeyValue> queue = new ArrayList<>();
        boolean phase;
        boolean semaphore;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Connection.Kind backend = connection.kind();
        if (!"/".equals(prefix)) {
            NameArgument.check(prefix, spec.commandLine().getErr(), backend);
        }
        try (Cluster cluster = connection.open()) {
            Map<String, Primitive> names = cluster instanceof ZooKeeper zk
                    ? ZkNames.under(zk, prefix)
                    : cluster instanceof Redis redis ? RedisNames.under(redis, prefix) : etcdNames((Etcd) cluster);
            if (names.isEmpty()) {
                String under = "/".equals(prefix) ? "/" : prefix + "/";
                throw new CliFailure(
                        ExitCode.NOTHING_HELD,
                        "no name in use at or under " + prefix
                                + (cluster instanceof ZooKeeper
                                        ? ": no claim node and no marker of a name there; check the prefix (zkCli.sh"
                                                + " ls -R " + prefix + ")"
                                        : cluster instanceof Redis
                                                ? ": no queue, claim or marker of a name there; check the prefix"
                                                        + " (redis-cli --scan --pattern 'disco:{" + prefix + "*')"
                                                : ": no key under " + under
                                                        + " and no marker of a name there; check the prefix (etcdctl"
                                                        + " get --prefix --keys-only " + under + ")"));
            }
            int width = Math.max(
                    4, names.keySet().stream().mapToInt(String::length).max().orElse(4));
            String format = "%-" + width + "s  %-9s  %7s  %7s  %-7s  %s%n";
            out.printf(format, "NAME", "KIND", "HOLDING", "WAITING", "TOKEN", "HELD-SINCE");
            for (Map.Entry<String, Primitive> e : names.entrySet()) {
                String name = e.getKey();
                Primitive kind = e.getValue();
                List<Claimant> own = cluster.claimants(kind, name).stream()
                        .filter(c -> cluster.isClaimOf(kind, name, c.key()))
                        .toList();
                List<Claimant> holders = own.stream()
                        .filter(c -> c.role() == Claimant.Role.HOLDER)
                        .toList();
                String token = holders.isEmpty()
                        ? "-"
                        : holders.stream()
                                .map(c -> c.token())
                                .reduce((a, b) -> a.isEmpty() || b.isEmpty()
                                        ? Optional.empty()
                                        : a.get().compareTo(b.get()) >= 0 ? a : b)
                                .flatMap(t -> t)
                                .map(t -> Long.toString(t.value()))
                                .orElse("?");
                String since = holders.isEmpty()
                        ? "-"
                        : holders.stream()
                                .map(Claimant::heldSince)
                                .reduce((a, b) -> a.isEmpty() || b.isEmpty()
                                        ? Optional.empty()
                                        : a.get().isBefore(b.get()) ? a : b)
                                .flatMap(t -> t)
                                .map(Instant::toString)
                                .orElse("?");
                out.printf(
                        format, name, KeyLayout.label(kind), holders.size(), own.size() - holders.size(), token, since);
            }
            out.printf(
                    "%d name%s at or under %s; disco holders NAME shows who holds and waits%n",
                    names.size(), names.size() == 1 ? "" : "s", prefix);
            return ExitCode.OK;
        }
    }

    /** The names at or under the prefix on etcd, in name order, with their kinds: the keys read in one Txn. */
    private Map<String, Primitive> etcdNames(Etcd etcd) {
        String under = "/".equals(prefix) ? "/" : prefix + "/";
        GetOption all = GetOption.builder().isPrefix(true).build();
        GetOption keysOnly =
                GetOption.builder().isPrefix(true).withKeysOnly(true).build();
        TxnResponse r = etcd.await(
                () -> etcd.client()
                        .getKVClient()
                        .txn()
                        .Then(
                                Op.get(Etcd.bytes(under), all),
                                Op.get(Etcd.bytes(EtcdKeys.PHASE_NAMESPACE + prefix), keysOnly),
                                Op.get(Etcd.bytes(EtcdKeys.LIMIT_NAMESPACE + prefix), keysOnly),
                                Op.get(Etcd.bytes(EtcdKeys.SLOT_NAMESPACE + prefix), keysOnly))
                        .commit(),
                "read of the keys under " + prefix);
        Map<String, Found> found = new TreeMap<>();
        for (KeyValue kv : r.getGetResponses().get(0).getKvs()) {
            String key = Etcd.text(kv.getKey());
            found.computeIfAbsent(nameOf(key), n -> new Found()).queue.add(kv);
        }
        for (String n : markerNames(r.getGetResponses().get(1).getKvs(), EtcdKeys.PHASE_NAMESPACE, false)) {
            found.computeIfAbsent(n, x -> new Found()).phase = true;
        }
        Set<String> semaphores = markerNames(r.getGetResponses().get(2).getKvs(), EtcdKeys.LIMIT_NAMESPACE, false);
        semaphores.addAll(markerNames(r.getGetResponses().get(3).getKvs(), EtcdKeys.SLOT_NAMESPACE, true));
        for (String n : semaphores) {
            found.computeIfAbsent(n, x -> new Found()).semaphore = true;
        }
        found.keySet().removeIf(n -> !n.equals(prefix) && !n.startsWith(under));
        Map<String, Primitive> names = new TreeMap<>();
        found.forEach((n, f) ->
                names.put(n, KeyLayout.kind(n, f.queue, f.phase, f.semaphore).orElse(Primitive.LOCK)));
        return names;
    }

    /** The name a key under the prefix belongs to: without its last segment, and without a read/write lock's mode. */
    private static String nameOf(String key) {
        String name = key.substring(0, Math.max(0, key.lastIndexOf('/')));
        for (String mode : new String[] {"/read", "/write"}) {
            if (name.endsWith(mode) && name.length() > mode.length()) {
                return name.substring(0, name.length() - mode.length());
            }
        }
        return name;
    }

    /** The names of markers: the key without the namespace (and, for slot keys, without the slot number). */
    private static Set<String> markerNames(List<KeyValue> markers, String namespace, boolean slot) {
        Set<String> out = new TreeSet<>();
        for (KeyValue kv : markers) {
            String n = Etcd.text(kv.getKey()).substring(namespace.length());
            out.add(slot ? n.substring(0, Math.max(0, n.lastIndexOf('/'))) : n);
        }
        return out;
    }
}
