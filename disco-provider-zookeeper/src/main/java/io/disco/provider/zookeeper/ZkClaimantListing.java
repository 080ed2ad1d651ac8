package io.disco.provider.zookeeper;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Claimant.Mode;
import io.disco.core.Claimant.Role;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * Who holds and who waits for a path ({@link ZooKeeperSession#claimants}), read in one consistent snapshot: the
 * queue directory's children are listed, then one read-only {@code multi} (ZooKeeper 3.6+) reads the directory's
 * children again with every queue node's data and stat and what gives the tokens; if the children changed in
 * between, it reads again. Nodes of Curator's own recipes on the path are listed too (their data is not this
 * library's: {@link ClaimMetadata#UNKNOWN}, or {@link ClaimMetadata#EMPTY} for empty data).
 *
 * <p>Holders, and their tokens, per primitive (the same as the grants' tokens):
 * <ul>
 *   <li>lock: the first {@code lock-} node in sequence order holds; its token is its czxid;</li>
 *   <li>read/write lock: the first node if it is a writer's ({@code __WRIT__}), else every reader before the
 *       first writer. A reader's token is the phase marker's czxid (once a disco reader of the phase created
 *       it); a writer's is its node's mzxid once its admission transaction set its data (a disco writer), empty
 *       for a plain Curator writer, whose node was never written;</li>
 *   <li>semaphore: the first {@code limit} {@code lease-} nodes (the limit recorded in {@code <path>/limit}; every
 *       node when none is recorded, as for a path only Curator's recipe uses); a holder's token is the mzxid of the
 *       slot {@code <path>/slots/<i>} whose data names its node;</li>
 *   <li>election: the first {@code latch-} node leads; its token is its czxid; the value is the candidate's and
 *       the metadata {@link ClaimMetadata#EMPTY}.</li>
 * </ul>
 * The lease id of a claimant is its node's ephemeral owner: the ZooKeeper session id.
 */
final class ZkClaimantListing {

    private static final int ATTEMPTS = 10;

    private final CuratorFramework client;
    private final String connectString;

    ZkClaimantListing(CuratorFramework client, String connectString) {
        this.client = client;
        this.connectString = connectString;
    }

    List<Claimant> list(Primitive primitive, String name) {
        Objects.requireNonNull(primitive, "primitive");
        String path = ZooKeeperNodes.checkName(name);
        SessionThread.refuseOnSessionThread("claimants()");
        try {
            return switch (primitive) {
                case LOCK -> lock(path);
                case RWLOCK -> rwlock(path);
                case SEMAPHORE -> semaphore(path);
                case ELECTION -> election(path);
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DiscoException("interrupted while listing the claimants of " + path, e);
        } catch (DiscoException e) {
            throw e;
        } catch (Exception e) {
            throw new DiscoException(
                    "ZooKeeper at " + connectString + " failed while listing the claimants of " + path + ": " + e, e);
        }
    }

    private List<Claimant> lock(String path) throws Exception {
        Snapshot s = read(path, List.of(NodeKind.LOCK), List.of());
        List<Claimant> out = new ArrayList<>();
        for (int i = 0; i < s.nodes.size(); i++) {
            Node n = s.nodes.get(i);
            Optional<FencingToken> token = i == 0 ? Optional.of(FencingToken.of(n.stat.getCzxid())) : Optional.empty();
            out.add(n.claimant(i == 0 ? Role.HOLDER : Role.WAITER, i, Mode.EXCLUSIVE, token, true));
        }
        return out;
    }

    private List<Claimant> rwlock(String path) throws Exception {
        String marker = ZooKeeperNodes.phaseMarker(path);
        Snapshot s = read(path, List.of(NodeKind.READ, NodeKind.WRITE), List.of(marker));
        Stat phase = s.extra.get(marker) == null ? null : s.extra.get(marker).stat;
        List<Claimant> out = new ArrayList<>();
        boolean writerSeen = false;
        for (int i = 0; i < s.nodes.size(); i++) {
            Node n = s.nodes.get(i);
            boolean writer = NodeKind.WRITE.names(NodeKind.name(n.path));
            boolean holds = writer ? i == 0 : !writerSeen;
            writerSeen |= writer;
            Optional<FencingToken> token = Optional.empty();
            if (holds && writer && n.stat.getMzxid() != n.stat.getCzxid()) {
                token = Optional.of(FencingToken.of(n.stat.getMzxid()));
            } else if (holds && !writer && phase != null) {
                token = Optional.of(FencingToken.of(phase.getCzxid()));
            }
            out.add(n.claimant(
                    holds ? Role.HOLDER : Role.WAITER, i, writer ? Mode.EXCLUSIVE : Mode.SHARED, token, true));
        }
        return out;
    }

    private List<Claimant> semaphore(String path) throws Exception {
        String limitNode = ZooKeeperNodes.semaphoreLimit(path);
        int limit = -1;
        try {
            limit = Integer.parseInt(new String(client.getData().forPath(limitNode), StandardCharsets.UTF_8));
        } catch (KeeperException.NoNodeException | NumberFormatException e) {
            // no limit recorded (a path only Curator's recipe uses): every node is listed as a holder
        }
        List<String> slots = new ArrayList<>();
        for (int i = 0; i < Math.max(limit, 0); i++) {
            slots.add(ZooKeeperNodes.semaphoreSlot(path, i));
        }
        Snapshot s = read(ZooKeeperNodes.semaphoreLeases(path), List.of(NodeKind.LEASE), slots);
        Map<String, Long> slotTokens = new HashMap<>();
        for (String slot : slots) {
            Node n = s.extra.get(slot);
            if (n != null && n.data.length > 0) {
                slotTokens.put(new String(n.data, StandardCharsets.UTF_8), n.stat.getMzxid());
            }
        }
        int holders = limit < 0 ? s.nodes.size() : limit;
        List<Claimant> out = new ArrayList<>();
        for (int i = 0; i < s.nodes.size(); i++) {
            Node n = s.nodes.get(i);
            boolean holds = i < holders;
            Long slotToken = holds ? slotTokens.get(n.path) : null;
            Optional<FencingToken> token =
                    slotToken == null ? Optional.empty() : Optional.of(FencingToken.of(slotToken));
            out.add(n.claimant(holds ? Role.HOLDER : Role.WAITER, i, Mode.SHARED, token, true));
        }
        return out;
    }

    private List<Claimant> election(String path) throws Exception {
        Snapshot s = read(path, List.of(NodeKind.LATCH), List.of());
        List<Claimant> out = new ArrayList<>();
        for (int i = 0; i < s.nodes.size(); i++) {
            Node n = s.nodes.get(i);
            Optional<FencingToken> token = i == 0 ? Optional.of(FencingToken.of(n.stat.getCzxid())) : Optional.empty();
            out.add(n.claimant(i == 0 ? Role.HOLDER : Role.WAITER, i, Mode.EXCLUSIVE, token, false));
        }
        return out;
    }

    /** One node as read: its path, data and stat. */
    private record Node(String path, byte[] data, Stat stat) {

        Claimant claimant(Role role, int position, Mode mode, Optional<FencingToken> token, boolean metadata) {
            String value = new String(data, StandardCharsets.UTF_8);
            // when a hold began is not recorded on ZooKeeper (its nodes keep their creation time only)
            return new Claimant(
                    path,
                    stat.getEphemeralOwner(),
                    role,
                    position,
                    mode,
                    token,
                    Optional.empty(),
                    metadata ? ClaimMetadata.parse(value) : ClaimMetadata.EMPTY,
                    value);
        }
    }

    /** The queue's nodes in sequence order, and the extra nodes that exist, by path. */
    private record Snapshot(List<Node> nodes, Map<String, Node> extra) {}

    /**
     * Reads the queue of {@code kinds} in {@code dir} and the {@code extra} nodes in one read-only multi, which
     * also lists {@code dir} again: a snapshot only if that list is the one the multi's reads were built from.
     */
    private Snapshot read(String dir, List<NodeKind> kinds, List<String> extra) throws Exception {
        org.apache.zookeeper.ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        List<String> children = children(dir);
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            List<String> queue = NodeKind.queue(children, kinds);
            List<Op> ops = new ArrayList<>();
            ops.add(Op.getChildren(raw(dir)));
            for (String name : queue) {
                ops.add(Op.getData(raw(ZKPaths.makePath(dir, name))));
            }
            for (String path : extra) {
                ops.add(Op.getData(raw(path)));
            }
            List<OpResult> results;
            try {
                results = zk.multi(ops);
            } catch (KeeperException e) {
                if (e.getResults() == null || e.getResults().size() != ops.size()) {
                    throw e;
                }
                results = e.getResults(); // a node that is gone: its read answers an error, the others their data
            }
            List<String> now = results.get(0) instanceof OpResult.GetChildrenResult r ? r.getChildren() : List.of();
            if (!NodeKind.queue(now, kinds).equals(queue)) {
                children = now; // changed between the two reads: again, from the newer list
                continue;
            }
            List<Node> nodes = new ArrayList<>();
            for (int i = 0; i < queue.size(); i++) {
                if (results.get(1 + i) instanceof OpResult.GetDataResult d) {
                    nodes.add(new Node(ZKPaths.makePath(dir, queue.get(i)), data(d), d.getStat()));
                }
            }
            Map<String, Node> found = new HashMap<>();
            for (int i = 0; i < extra.size(); i++) {
                if (results.get(1 + queue.size() + i) instanceof OpResult.GetDataResult d) {
                    found.put(extra.get(i), new Node(extra.get(i), data(d), d.getStat()));
                }
            }
            return new Snapshot(nodes, found);
        }
        throw new DiscoException("the claimants of " + dir + " changed under every one of " + ATTEMPTS + " reads");
    }

    /** The path as the server knows it: under the client's namespace, as Curator's own calls put it. */
    private String raw(String path) {
        return ZKPaths.fixForNamespace(client.getNamespace(), path);
    }

    private List<String> children(String dir) throws Exception {
        try {
            return client.getChildren().forPath(dir);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private static byte[] data(OpResult.GetDataResult d) {
        return d.getData() == null ? new byte[0] : d.getData();
    }
}
