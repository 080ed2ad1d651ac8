package io.disco.cli;

import io.disco.provider.etcd.EtcdKeys;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code disco leftovers [PREFIX]}: the keys this library writes beside the holders' keys that no live
 * holder needs any more:
 * <ul>
 *   <li>a read/write lock's phase marker {@code disco-rwlock-phase:<name>} (not leased: only a writer's
 *       admission deletes it, so it stays after the last reader of a name) when no key is left under
 *       {@code <name>/};</li>
 *   <li>a semaphore's limit record {@code disco-semaphore-limit:<name>} (not leased, written by the first
 *       service of a name) when no key is left under {@code <name>/} and no slot key;</li>
 *   <li>a semaphore slot key {@code disco-semaphore-slot:<name>/<i>} whose holder key incarnation (its
 *       value, {@code <key>@<CreateRevision>}) is gone: leased, so it goes with its lease, but a holder key
 *       deleted alone (a break of another client, an {@code etcdctl del}) leaves it until then.</li>
 * </ul>
 * Deleting any of them is safe while no holder uses the name: the next reader creates a new marker with
 * a higher token, the next semaphore service records its limit again, the next holder claims a free
 * slot. {@code --delete} deletes each one in a Txn guarded on it being unchanged since it was read; a
 * reader that joins a name's read phase between that read and the delete keeps the old marker's token
 * and is fenced out once a newer reader's token is seen (it loses its permission, nothing is
 * corrupted), so delete markers of names in use only while they are quiet. On ZooKeeper ({@code --backend zookeeper})
 * the leftovers are nodes: phase markers, idle semaphores' limits and slots, old break records and empty containers
 * ({@link ZkLeftovers}); on Redis ({@code --backend redis}) queue entries and slots whose claim is gone, and claims
 * that nothing will expire or that no grant sees ({@link RedisLeftovers}).
 */
@Command(
        name = "leftovers",
        mixinStandardHelpOptions = true,
        footer = {"%n" + ExitCode.FOOTER},
        description = "List the markers that no live holder uses (rwlock phase markers, semaphore limit records, "
                + "slot keys whose holder is gone; on ZooKeeper also an idle semaphore's slots, old break records and "
                + "empty container nodes; on Redis queue entries and slots whose claim is gone, claims without a TTL or "
                + "outside their queue), under PREFIX (the start of their names; default: every name); "
                + "--delete deletes them.")
final class LeftoversCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(
            paramLabel = "PREFIX",
            arity = "0..1",
            defaultValue = "",
            description = "only names that start with it, e.g. /locks/ (default: every name)")
    String prefix;

    @Option(
            names = "--delete",
            description = "delete what is found (each guarded on being unchanged since it was read)")
    boolean delete;

    @Spec
    CommandSpec spec;

    /** One marker nobody uses. */
    private record Leftover(String kind, KeyValue kv, String name, String why) {}

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        if (connection.kind() == Connection.Kind.ZOOKEEPER) {
            try (ZooKeeper zk = connection.openZooKeeper()) {
                return ZkLeftovers.run(zk, prefix, delete, out);
            }
        }
        if (connection.kind() == Connection.Kind.REDIS) {
            try (Redis redis = connection.openRedis()) {
                return RedisLeftovers.run(redis, prefix, delete, out);
            }
        }
        try (Etcd etcd = connection.openEtcd()) {
            List<Leftover> found = new ArrayList<>();
            for (KeyValue kv : range(etcd, EtcdKeys.PHASE_NAMESPACE + prefix)) {
                String n = Etcd.text(kv.getKey()).substring(EtcdKeys.PHASE_NAMESPACE.length());
                if (count(etcd, n + "/") == 0) {
                    found.add(new Leftover("rwlock-phase", kv, n, "no reader or writer holds or waits"));
                }
            }
            for (KeyValue kv : range(etcd, EtcdKeys.LIMIT_NAMESPACE + prefix)) {
                String n = Etcd.text(kv.getKey()).substring(EtcdKeys.LIMIT_NAMESPACE.length());
                if (count(etcd, n + "/") == 0 && count(etcd, EtcdKeys.SLOT_NAMESPACE + n + "/") == 0) {
                    found.add(new Leftover(
                            "semaphore-limit",
                            kv,
                            n,
                            "no permit held or waited for (limit " + Etcd.text(kv.getValue()) + ")"));
                }
            }
            for (KeyValue kv : range(etcd, EtcdKeys.SLOT_NAMESPACE + prefix)) {
                String k = Etcd.text(kv.getKey());
                String n = k.substring(
                        EtcdKeys.SLOT_NAMESPACE.length(),
                        Math.max(EtcdKeys.SLOT_NAMESPACE.length(), k.lastIndexOf('/')));
                String claim = Etcd.text(kv.getValue());
                int at = claim.lastIndexOf('@');
                if (at < 0) {
                    continue; // not this library's slot
                }
                String holder = claim.substring(0, at);
                long created;
                try {
                    created = Long.parseLong(claim.substring(at + 1));
                } catch (NumberFormatException e) {
                    continue;
                }
                GetResponse h =
                        etcd.await(() -> etcd.client().getKVClient().get(Etcd.bytes(holder)), "read of " + holder);
                if (h.getKvs().isEmpty() || h.getKvs().get(0).getCreateRevision() != created) {
                    found.add(new Leftover(
                            "semaphore-slot",
                            kv,
                            n,
                            "its holder " + holder + " (created at revision " + created + ") is gone"));
                }
            }
            if (found.isEmpty()) {
                out.println("no leftovers" + (prefix.isEmpty() ? "" : " under " + prefix));
                return ExitCode.OK;
            }
            int width = found.stream()
                    .mapToInt(l -> Etcd.text(l.kv().getKey()).length())
                    .max()
                    .orElse(3);
            String format = "%-15s  %-" + width + "s  %s%n";
            out.printf(format, "KIND", "KEY", "WHY");
            for (Leftover l : found) {
                out.printf(format, l.kind(), Etcd.text(l.kv().getKey()), l.why());
            }
            if (!delete) {
                out.printf(
                        "%d leftover%s; --delete deletes %s%n",
                        found.size(), found.size() == 1 ? "" : "s", found.size() == 1 ? "it" : "them");
                return ExitCode.OK;
            }
            int deleted = 0;
            for (Leftover l : found) {
                TxnResponse r = etcd.await(
                        () -> etcd.client()
                                .getKVClient()
                                .txn()
                                .If(new Cmp(
                                        l.kv().getKey(), Cmp.Op.EQUAL, CmpTarget.modRevision(l.kv().getModRevision())))
                                .Then(Op.delete(l.kv().getKey(), DeleteOption.DEFAULT))
                                .commit(),
                        "guarded delete of " + Etcd.text(l.kv().getKey()));
                if (r.isSucceeded()) {
                    deleted++;
                } else {
                    out.println("kept " + Etcd.text(l.kv().getKey()) + ": it changed since it was read");
                }
            }
            out.printf("deleted %d of %d leftover%s%n", deleted, found.size(), found.size() == 1 ? "" : "s");
            return ExitCode.OK;
        }
    }

    private static List<KeyValue> range(Etcd etcd, String start) {
        return etcd.await(
                        () -> etcd.client()
                                .getKVClient()
                                .get(
                                        Etcd.bytes(start),
                                        GetOption.builder().isPrefix(true).build()),
                        "read of " + start + "*")
                .getKvs();
    }

    private static long count(Etcd etcd, String start) {
        return etcd.await(
                        () -> etcd.client()
                                .getKVClient()
                                .get(
                                        Etcd.bytes(start),
                                        GetOption.builder()
                                                .isPrefix(true)
                                                .withCountOnly(true)
                                                .build()),
                        "count of " + start + "*")
                .getCount();
    }
}
