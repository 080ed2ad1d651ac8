package io.disco.cli;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * {@code disco break} on ZooKeeper: the nodes to delete, read once ({@link #read}), and deleted in one transaction
 * ({@link #commit}) guarded on each being the node that was listed and unchanged since it was read:
 * <ul>
 *   <li>a claim's node: its path names one incarnation (the sequence, and Curator's protection UUID, are never
 *       reused on a path), its ephemeral owner must be the session the listing showed, and the delete is guarded on
 *       its data version (a disco writer's admission, for one, sets its data); a node that changed or went is never
 *       hit;</li>
 *   <li>with the readers of a read/write lock, the phase marker, guarded on its version (see {@link BreakCommand});</li>
 *   <li>with a semaphore permit, its slot is freed (its data emptied, as the holder's release would), guarded on the
 *       slot's version.</li>
 * </ul>
 * The same transaction creates a {@linkplain ZooKeeperNodes#breakRecord record} per deleted claim (persistent, its data
 * who broke it and when), by which {@code disco watch} tells the break from a release; its czxid is the
 * transaction's zxid R, which the tool prints. {@code disco leftovers} deletes records older than
 * {@link BreakRecord#TTL_SECONDS}.
 */
final class ZkBreak {

    private final ZooKeeper zk;
    private final Primitive kind;
    private final String name;
    private final List<Claimant> targets;
    private final List<CuratorOp> ops;
    private final List<String> deletes;

    private ZkBreak(
            ZooKeeper zk,
            Primitive kind,
            String name,
            List<Claimant> targets,
            List<CuratorOp> ops,
            List<String> deletes) {
        this.zk = zk;
        this.kind = kind;
        this.name = name;
        this.targets = targets;
        this.ops = ops;
        this.deletes = deletes;
    }

    /**
     * Reads the incarnations of {@code targets} (and the phase marker of a read phase, or a permit's slot) and
     * prepares their guarded delete.
     *
     * @throws CliFailure {@link ExitCode#NOT_BROKEN} when a target is gone or no longer the one listed
     */
    static ZkBreak read(ZooKeeper zk, Primitive kind, String name, List<Claimant> targets, boolean readers) {
        return zk.await(() -> prepare(zk, kind, name, targets, readers), "read of the holder's node");
    }

    private static ZkBreak prepare(ZooKeeper zk, Primitive kind, String name, List<Claimant> targets, boolean readers)
            throws Exception {
        CuratorFramework c = zk.client();
        List<CuratorOp> ops = new ArrayList<>();
        List<String> deletes = new ArrayList<>();
        for (Claimant t : targets) {
            Stat st = c.checkExists().forPath(t.key());
            if (st == null) {
                throw new CliFailure(
                        ExitCode.NOT_BROKEN,
                        t.key() + " is gone already (released, or its session ended): nothing deleted; run disco"
                                + " holders " + name + " again");
            }
            if (st.getEphemeralOwner() != t.leaseId()) {
                throw new CliFailure(
                        ExitCode.NOT_BROKEN,
                        t.key() + " belongs to session " + Long.toHexString(st.getEphemeralOwner()) + ", not to "
                                + Long.toHexString(t.leaseId()) + " as listed: nothing deleted; run disco holders "
                                + name + " again");
            }
            ops.add(c.transactionOp().delete().withVersion(st.getVersion()).forPath(t.key()));
            deletes.add(t.key());
        }
        if (readers) {
            String marker = ZooKeeperNodes.phaseMarker(name);
            Stat m = c.checkExists().forPath(marker);
            if (m != null) {
                ops.add(c.transactionOp().delete().withVersion(m.getVersion()).forPath(marker));
                deletes.add(marker + " (the read phase's marker)");
            }
        } else if (kind == Primitive.SEMAPHORE) {
            String holder = targets.get(0).key();
            String dir = ZooKeeperNodes.semaphoreSlots(name);
            List<String> slots;
            try {
                slots = c.getChildren().forPath(dir);
            } catch (KeeperException.NoNodeException e) {
                slots = List.of(); // a lease of Curator's recipe alone: no slot
            }
            for (String slot : slots) {
                String path = ZKPaths.makePath(dir, slot);
                Stat st = new Stat();
                byte[] data;
                try {
                    data = c.getData().storingStatIn(st).forPath(path);
                } catch (KeeperException.NoNodeException e) {
                    continue;
                }
                if (data != null && new String(data, StandardCharsets.UTF_8).equals(holder)) {
                    ops.add(c.transactionOp()
                            .setData()
                            .withVersion(st.getVersion())
                            .forPath(path, new byte[0]));
                    deletes.add(path + " (the permit's slot: freed)");
                }
            }
        }
        return new ZkBreak(zk, kind, name, targets, ops, deletes);
    }

    /** @return what the break deletes (and frees), for the confirmation */
    List<String> deletes() {
        return deletes;
    }

    /**
     * Deletes, guarded, with the break records; prints the zxid R of the transaction and the tokens.
     *
     * @return {@link ExitCode#OK}
     * @throws CliFailure {@link ExitCode#NOT_BROKEN} when something changed since it was read
     */
    int commit(PrintWriter out) {
        CuratorFramework c = zk.client();
        long zxid = zk.await(
                () -> {
                    List<CuratorOp> all = new ArrayList<>(ops);
                    byte[] record = BreakRecord.value().getBytes(StandardCharsets.UTF_8);
                    for (Claimant t : targets) {
                        String r = ZooKeeperNodes.breakRecord(t.key());
                        c.createContainers(ZKPaths.getPathAndNode(r).getPath());
                        all.add(c.transactionOp()
                                .create()
                                .withMode(CreateMode.PERSISTENT)
                                .forPath(r, record));
                    }
                    try {
                        c.transaction().forOperations(all);
                    } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                        throw new CliFailure(
                                ExitCode.NOT_BROKEN,
                                "the holder changed since it was read (released, its session ended, or its node"
                                        + " changed): nothing deleted; run disco holders " + name + " again",
                                e);
                    } catch (KeeperException.NodeExistsException e) {
                        throw new CliFailure(
                                ExitCode.NOT_BROKEN,
                                "a record of an earlier break of " + e.getPath() + " exists: nothing deleted; run"
                                        + " disco holders " + name + " again",
                                e);
                    }
                    Stat r = c.checkExists()
                            .forPath(ZooKeeperNodes.breakRecord(targets.get(0).key()));
                    return r == null ? -1L : r.getCzxid();
                },
                "guarded delete of the holder's node");
        out.printf(
                "broken at zxid %s: deleted %s%n",
                zxid < 0 ? "?" : zxid + " (0x" + Long.toHexString(zxid) + ")", String.join(", ", deletes));
        OptionalLong broken = targets.stream()
                .map(Claimant::token)
                .flatMap(Optional::stream)
                .mapToLong(t -> t.value())
                .max();
        String was = broken.isPresent()
                ? "the broken holder's token was " + broken.getAsLong()
                : "the broken holder had no token in ZooKeeper's state (a holder of Curator's recipe)";
        boolean czxidTokens = kind == Primitive.LOCK || kind == Primitive.ELECTION;
        if (czxidTokens) {
            // the next holder's node was created after the broken one's, maybe before the break: its czxid exceeds T,
            // not R
            out.printf(
                    "%s; the next %s's token (its node's czxid) will exceed it.%n",
                    was, kind == Primitive.ELECTION ? "leader" : "holder");
        } else {
            out.printf(
                    "%s; the next holder's token will exceed %s (every token issued from now on is above %s).%n",
                    was, broken.isPresent() ? broken.getAsLong() : "it", zxid < 0 ? "the break's zxid" : zxid);
        }
        String mark = czxidTokens
                ? (broken.isPresent() ? Long.toString(broken.getAsLong() + 1) : "above its token")
                : zxid < 0 ? "the break's zxid" : Long.toString(zxid);
        out.println("A holder of this library finds its node deleted and reports the loss; a guard rejects its token"
                + " once it has admitted a newer one (raise the guard's mark to " + mark + " to reject it now). A"
                + " holder of Curator's recipes (InterProcessMutex, LeaderLatch, ...) does not watch its node, and"
                + " sends no token to reject.");
        return ExitCode.OK;
    }
}
