package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.etcd.EtcdKeys;
import io.disco.provider.redis.RedisKeys;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code disco break NAME}: deletes the current holder's key, after a confirmation, in one Txn guarded
 * on the key being the incarnation that was read (so a holder that changed meanwhile is never hit).
 *
 * <p>What is deleted, per primitive:
 * <ul>
 *   <li>lock, election: the holder's (leader's) key;</li>
 *   <li>read/write lock held by a writer: the writer's key;</li>
 *   <li>read/write lock held by readers: every reader's key <em>and</em> the phase marker. Readers
 *       share one token, so a guard cannot tell one reader from another: breaking one reader would
 *       leave its token valid for the next readers. Deleting the marker makes the next reader's token
 *       a new, higher one, which fences every broken reader out;</li>
 *   <li>semaphore: one permit, the holder key named with {@code --holder} (needed when several permits are
 *       held), and its slot key; the next holder of that slot gets a higher token for the slot.</li>
 * </ul>
 * The same Txn writes a {@link BreakRecord} per deleted holder key, by which {@code disco watch} tells the
 * break from a release. On ZooKeeper the same nodes go ({@link ZkBreak}: the holder's node, the phase marker with a
 * read phase, a permit's slot freed), in one transaction guarded on each node's version and session. The holder learns of it from its own key's delete: the library watches its held key, and a delete it
 * did not make ends the grant as lost ({@code done()} completes, {@code err()} tells, the client's hold
 * reports the loss). The holder's session and lease stay (other names it holds are not touched).
 */
@Command(
        name = "break",
        mixinStandardHelpOptions = true,
        footer = {
            "%n" + "The tokens: every token issued after the break is at least the revision of the delete (printed), "
                    + "except an election's: the next leader's token is its key's CreateRevision, above the broken leader's "
                    + "token. A resource guard rejects the broken holder's token once it has admitted a newer one; to "
                    + "reject it at once, raise the guard's mark to the printed revision (Guard.withInitialToken); for "
                    + "an election to the broken leader's token + 1 (printed), since the next leader's is below the "
                    + "revision.",
            "%n" + "On ZooKeeper (--backend zookeeper) the holder's node is deleted, guarded on its version and its "
                    + "session, with a record /disco-broken<node>; the zxid of the delete is printed. A lock's or an "
                    + "election's next token is the czxid of a node made before the break: above the broken token, not the "
                    + "zxid, so the mark to raise is the broken token + 1 (printed); the others' are above the zxid.",
            "%n"
                    + "On Redis (--backend redis) the provider's break script deletes the holder's claim key (readers: every "
                    + "reader's and the read phase's token; a permit: its slot too), guarded on each still holding, wakes "
                    + "the claims now admitted and announces the break to the holder's session. The name's token record "
                    + "stays: every later token is above the broken one, so the mark to raise is the broken token + 1.",
            "%n" + ExitCode.FOOTER
        },
        description =
                "Delete the current holder's key (ZooKeeper: node) of NAME (after a confirmation) and print the token the next"
                        + " holder will exceed.")
final class BreakCommand implements Callable<Integer> {

    @Mixin
    Connection connection;

    @Parameters(paramLabel = "NAME", description = "the lock, read/write lock, semaphore or election name")
    String name;

    @Mixin
    PrimitiveOption primitive;

    @Option(
            names = "--holder",
            paramLabel = "KEY",
            description =
                    "the holder key to break (a semaphore permit when several are held; for the others it must be the holder's)")
    String holder;

    @Option(
            names = {"-y", "--yes"},
            description = "do not ask for a confirmation")
    boolean yes;

    @ParentCommand
    DiscoCli root;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        NameArgument.check(name, spec.commandLine().getErr(), connection.kind());
        try (Cluster cluster = connection.open()) {
            Primitive kind = primitive.resolve(cluster, name);
            if (cluster instanceof Redis && holder != null && holder.startsWith(RedisKeys.PREFIX)) {
                // the claim's Redis key, disco:{<name>}:c:<id>, names the claimant <name>/<id>
                holder = RedisKeys.parseClaim(holder)
                        .map(p -> RedisKeys.grantKey(p[0], p[1]))
                        .orElse(holder);
            }
            List<Claimant> claimants = cluster.claimants(kind, name);
            // A key of a nested name (/locks/orders/<lease> under /locks/) is never this name's holder: only --holder
            // naming it breaks it.
            List<Claimant> holders = claimants.stream()
                    .filter(c -> c.role() == Claimant.Role.HOLDER && cluster.isClaimOf(kind, name, c.key()))
                    .toList();
            Optional<Claimant> namedNested = holder == null
                    ? Optional.empty()
                    : claimants.stream()
                            .filter(c -> c.key().equals(holder) && !cluster.isClaimOf(kind, name, c.key()))
                            .findFirst();
            List<String> nested = ClaimantTable.nested(cluster, kind, name, claimants);
            if (holders.isEmpty() && namedNested.isEmpty()) {
                throw new CliFailure(
                        ExitCode.NOTHING_HELD,
                        "nothing holds " + KeyLayout.label(kind) + " " + name + ": nothing to break"
                                + (nested.isEmpty()
                                        ? ""
                                        : "; the keys under " + name + "/ are of nested names ("
                                                + String.join(", ", nested)
                                                + "): break one by its own name (disco break " + nested.get(0)
                                                + "), or name its key with --holder"));
            }
            List<Claimant> targets = namedNested.map(List::of).orElseGet(() -> targets(kind, holders));
            boolean readers = namedNested.isEmpty()
                    && kind == Primitive.RWLOCK
                    && targets.get(0).mode() == Claimant.Mode.SHARED;
            if (cluster instanceof Redis redis) {
                RedisBreak plan = RedisBreak.of(redis, kind, name, targets, readers);
                announce(out, cluster, kind, targets, Optional.empty(), readers, plan.deletes());
                if (!yes && !confirmed(out)) {
                    out.println("not confirmed: nothing deleted");
                    return ExitCode.NOT_BROKEN;
                }
                return plan.commit(out);
            }
            if (cluster instanceof ZooKeeper zk) {
                ZkBreak plan = ZkBreak.read(zk, kind, name, targets, readers);
                announce(out, cluster, kind, targets, Optional.empty(), readers, plan.deletes());
                if (!yes && !confirmed(out)) {
                    out.println("not confirmed: nothing deleted");
                    return ExitCode.NOT_BROKEN;
                }
                return plan.commit(out);
            }
            Etcd etcd = (Etcd) cluster;

            // The incarnations to delete, and the markers that go with them, in one snapshot.
            List<Op> reads = new ArrayList<>();
            for (Claimant t : targets) {
                reads.add(Op.get(Etcd.bytes(t.key()), GetOption.DEFAULT));
            }
            reads.add(
                    readers
                            ? Op.get(Etcd.bytes(EtcdKeys.phaseMarker(name)), GetOption.DEFAULT)
                            : Op.get(
                                    Etcd.bytes(EtcdKeys.slots(name)),
                                    GetOption.builder().isPrefix(true).build()));
            TxnResponse snapshot = etcd.await(
                    () -> etcd.client()
                            .getKVClient()
                            .txn()
                            .Then(reads.toArray(Op[]::new))
                            .commit(),
                    "read of the holder's key");
            List<Cmp> unchanged = new ArrayList<>();
            List<Op> deletes = new ArrayList<>();
            List<String> deleted = new ArrayList<>();
            for (int i = 0; i < targets.size(); i++) {
                List<KeyValue> kvs = snapshot.getGetResponses().get(i).getKvs();
                if (kvs.isEmpty()) {
                    throw new CliFailure(
                            ExitCode.NOT_BROKEN,
                            targets.get(i).key() + " is gone already (released or expired):"
                                    + " nothing deleted; run disco holders " + name + " again");
                }
                KeyValue kv = kvs.get(0);
                unchanged.add(new Cmp(kv.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(kv.getCreateRevision())));
                deletes.add(Op.delete(kv.getKey(), DeleteOption.DEFAULT));
                deleted.add(Etcd.text(kv.getKey()));
            }
            List<KeyValue> markers =
                    snapshot.getGetResponses().get(targets.size()).getKvs();
            if (readers && !markers.isEmpty()) {
                KeyValue phase = markers.get(0);
                unchanged.add(
                        new Cmp(phase.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(phase.getCreateRevision())));
                deletes.add(Op.delete(phase.getKey(), DeleteOption.DEFAULT));
                deleted.add(Etcd.text(phase.getKey()) + " (the read phase's marker)");
            } else if (kind == Primitive.SEMAPHORE && namedNested.isEmpty()) {
                KeyValue holderKv = snapshot.getGetResponses().get(0).getKvs().get(0);
                String claim = Etcd.text(holderKv.getKey()) + "@" + holderKv.getCreateRevision();
                for (KeyValue slot : markers) {
                    if (Etcd.text(slot.getValue()).equals(claim)) {
                        unchanged.add(
                                new Cmp(slot.getKey(), Cmp.Op.EQUAL, CmpTarget.modRevision(slot.getModRevision())));
                        deletes.add(Op.delete(slot.getKey(), DeleteOption.DEFAULT));
                        deleted.add(Etcd.text(slot.getKey()) + " (the permit's slot)");
                    }
                }
            }

            announce(out, cluster, kind, targets, namedNested, readers, deleted);
            if (!yes && !confirmed(out)) {
                out.println("not confirmed: nothing deleted");
                return ExitCode.NOT_BROKEN;
            }
            // With the deletes, a record of the break per holder key, leased for a minute, so that disco watch tells a
            // break from a release (both delete the key and leave its lease).
            long recordLease = etcd.await(
                            () -> etcd.client().getLeaseClient().grant(BreakRecord.TTL_SECONDS),
                            "grant of the break record's lease")
                    .getID();
            for (String key : targets.stream().map(Claimant::key).toList()) {
                deletes.add(Op.put(
                        Etcd.bytes(BreakRecord.key(key)),
                        Etcd.bytes(BreakRecord.value()),
                        PutOption.builder().withLeaseId(recordLease).build()));
            }
            TxnResponse r = etcd.await(
                    () -> etcd.client()
                            .getKVClient()
                            .txn()
                            .If(unchanged.toArray(Cmp[]::new))
                            .Then(deletes.toArray(Op[]::new))
                            .commit(),
                    "guarded delete of the holder's key");
            if (!r.isSucceeded()) {
                throw new CliFailure(
                        ExitCode.NOT_BROKEN,
                        "the holder changed since it was read (released, expired, or a new"
                                + " incarnation): nothing deleted; run disco holders " + name + " again");
            }
            long revision = r.getHeader().getRevision();
            out.printf("broken at revision %d: deleted %s%n", revision, String.join(", ", deleted));
            // a nested name's key: its token as that name's holder is not what the listing of this name gives
            OptionalLong broken = namedNested.isPresent()
                    ? OptionalLong.empty()
                    : targets.stream()
                            .map(Claimant::token)
                            .flatMap(Optional::stream)
                            .mapToLong(t -> t.value())
                            .max();
            String was = namedNested.isPresent()
                    ? "the broken holder's token as a holder of " + EtcdKeys.nameOf(kind, name, holder)
                            + " is the one disco holders " + EtcdKeys.nameOf(kind, name, holder) + " showed"
                    : broken.isPresent()
                            ? "the broken holder's token was " + broken.getAsLong()
                            : "the broken holder's token is not in etcd's state (it is below " + revision + ")";
            if (kind == Primitive.ELECTION) {
                out.printf("%s; the next leader's token will exceed %d.%n", was, broken.orElse(revision - 1));
            } else {
                out.printf(
                        "%s; the next holder's token will exceed %d (every token issued from now on is at least %d).%n",
                        was, broken.orElse(revision - 1), revision);
            }
            // An election's next token is the CreateRevision of a key made before the break, below the delete's
            // revision: a mark raised to that revision would reject the next leader too.
            String mark = kind == Primitive.ELECTION
                    ? broken.isPresent() ? String.valueOf(broken.getAsLong() + 1) : "the broken leader's token + 1"
                    : String.valueOf(revision);
            out.println("The holder finds its key deleted and reports the loss; a guard rejects its token once it has"
                    + " admitted a newer one (raise the guard's mark to " + mark + " to reject it now).");
            return ExitCode.OK;
        }
    }

    /** Says what the break deletes, before the confirmation. */
    private void announce(
            PrintWriter out,
            Cluster cluster,
            Primitive kind,
            List<Claimant> targets,
            Optional<Claimant> namedNested,
            boolean readers,
            List<String> deleted) {
        out.printf(
                "%s %s: breaking %s%n",
                KeyLayout.label(kind),
                name,
                namedNested.isPresent()
                        ? "the key of the nested name " + cluster.nameOf(kind, name, holder)
                                + ", named with --holder (not a holder of " + name + ")"
                        : readers
                                ? "the read phase (" + targets.size() + " reader" + (targets.size() == 1 ? "" : "s")
                                        + ", one shared token)"
                                : "its " + (kind == Primitive.ELECTION ? "leader" : "holder"));
        ClaimantTable.print(out, cluster, kind, name, targets);
        out.println("deletes: " + String.join(", ", deleted));
        out.flush();
    }

    /** The claimants whose keys the break deletes; refuses an ambiguous or wrong {@code --key}. */
    private List<Claimant> targets(Primitive kind, List<Claimant> holders) {
        if (kind == Primitive.RWLOCK && holders.get(0).mode() == Claimant.Mode.SHARED) {
            if (holder != null) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "--holder: " + name + " is held by readers, who share one token: a"
                                + " break ends the whole read phase (every reader and the phase marker), so no single reader is named");
            }
            return holders;
        }
        if (holder != null) {
            return holders.stream()
                    .filter(h -> h.key().equals(holder))
                    .findFirst()
                    .map(List::of)
                    .orElseThrow(() -> new CliFailure(
                            ExitCode.USAGE,
                            "--holder " + holder + " is not a holder of " + name + "; holders: " + keys(holders)));
        }
        if (holders.size() > 1) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    holders.size() + " permits of " + name + " are held: name the one to break" + " with --holder ("
                            + keys(holders) + ")");
        }
        return holders;
    }

    private static String keys(List<Claimant> claimants) {
        return claimants.stream().map(Claimant::key).collect(Collectors.joining(", "));
    }

    private boolean confirmed(PrintWriter out) {
        out.print("Break it? The holder loses it and its writes will be rejected by a guard. [y/N] ");
        out.flush();
        try {
            String line = new BufferedReader(new InputStreamReader(root.in(), StandardCharsets.UTF_8)).readLine();
            out.println();
            if (line == null) {
                return false;
            }
            String answer = line.trim().toLowerCase(Locale.ROOT);
            return answer.equals("y") || answer.equals("yes");
        } catch (IOException e) {
            return false;
        }
    }
}
