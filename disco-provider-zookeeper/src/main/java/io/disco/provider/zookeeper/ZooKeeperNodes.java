package io.disco.provider.zookeeper;

import io.disco.client.Names;
import io.disco.core.Primitive;
import java.util.Objects;
import java.util.Optional;
import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.data.Stat;

/**
 * The nodes this library writes on ZooKeeper for a name, per primitive: the one layout that the provider writes and
 * the {@code disco} tool reads (public for that tool, as {@code EtcdKeys} is on etcd; it follows the provider, so
 * build nothing else on it). Every claim is an ephemeral-sequential node of its owner's session in the primitive's
 * queue directory ({@link #queueDir}), named as Curator's recipes name theirs, {@code _c_<uuid>-<kind><sequence>}, so
 * that disco and Curator claimants queue in one order (the sequence):
 * <ul>
 *   <li>lock: {@code <name>/_c_<uuid>-lock-<seq>}, {@code InterProcessMutex}'s (and {@code LeaderSelector}'s, whose
 *       leader is a mutex holder);</li>
 *   <li>read/write lock: {@code <name>/_c_<uuid>-__READ__<seq>} and {@code <name>/_c_<uuid>-__WRIT__<seq>},
 *       {@code InterProcessReadWriteLock}'s; the read phase's marker {@link #phaseMarker}, persistent and outside
 *       every lock directory (the readers' token is its czxid; a disco writer's admission deletes it);</li>
 *   <li>semaphore: {@code <name>/leases/_c_<uuid>-lease-<seq>} ({@link #semaphoreLeases}),
 *       {@code InterProcessSemaphoreV2}'s (whose own mutex is {@code <name>/locks}); the recorded limit
 *       {@link #semaphoreLimit} and the slots {@link #semaphoreSlot}, persistent: a slot's data is the path of the
 *       lease node that holds it, empty when it is free, and a permit's token is its slot's mzxid;</li>
 *   <li>election: {@code <name>/_c_<uuid>-latch-<seq>}, {@code LeaderLatch}'s, the data the candidate's value; the
 *       election's log of terms lives in the data of {@code <name>};</li>
 *   <li>{@code disco break}'s record of a node it deleted, {@link #breakRecord}, persistent.</li>
 * </ul>
 * The directories are Curator's container nodes ({@code creatingParentContainersIfNeeded}): ZooKeeper deletes one on
 * its container sweep once it is empty. The persistent nodes (a phase marker, a limit, the slots, a break record)
 * stay until somebody deletes them.
 */
public final class ZooKeeperNodes {

    /** Where the read/write locks' phase markers live: {@code /disco-rwlock-phase<name>}, outside every lock directory. */
    public static final String PHASE_ROOT = "/disco-rwlock-phase";
    /** Where {@code disco break}'s records live: {@code /disco-broken<node>}. */
    public static final String BREAK_ROOT = "/disco-broken";

    private ZooKeeperNodes() {}

    /**
     * The name rule of every backend and of the client ({@link Names}), then ZooKeeper's own path rule.
     *
     * @return {@code name}
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     */
    static String checkName(String name) {
        Names.check(name); // the name rule of every backend and of the client, up front
        PathUtils.validatePath(name);
        return name;
    }

    /**
     * @param name a read/write lock's name
     * @return its read phase's marker: {@code /disco-rwlock-phase<name>}
     */
    public static String phaseMarker(String name) {
        return PHASE_ROOT + Objects.requireNonNull(name, "name");
    }

    /**
     * Whether a node under {@link #PHASE_ROOT}, as read, is a phase marker rather than one of the directories between
     * the markers (containers, which ZooKeeper shows to clients as plain nodes): a marker is created without data and
     * gets no child, while a directory is made for a child. So a node that never had a child is taken for a marker,
     * one that has or had children for a directory. Misread are only the marker of a name under which a nested
     * read/write lock has (or had) a marker too, taken for a directory, and a directory whose marker was never
     * created (its reader's admission failed), taken for a marker.
     *
     * @param stat the node's stat
     * @return whether it is taken for a phase marker
     */
    public static boolean isPhaseMarker(Stat stat) {
        return stat.getCversion() == 0 && stat.getNumChildren() == 0 && stat.getEphemeralOwner() == 0;
    }

    /** @return the directory the phase marker of the read/write lock on {@code name} lives in */
    static String phaseMarkerDir(String name) {
        int i = name.lastIndexOf('/');
        return PHASE_ROOT + (i <= 0 ? "" : name.substring(0, i));
    }

    /**
     * @param name a semaphore's name
     * @return the directory its holders and waiters queue in: {@code <name>/leases}
     */
    public static String semaphoreLeases(String name) {
        return Objects.requireNonNull(name, "name") + "/leases";
    }

    /**
     * @param name a semaphore's name
     * @return the directory of its slots: {@code <name>/slots}
     */
    public static String semaphoreSlots(String name) {
        return Objects.requireNonNull(name, "name") + "/slots";
    }

    /**
     * @param name a semaphore's name
     * @param i the slot, from 0
     * @return the slot's node: {@code <name>/slots/<i>}
     */
    public static String semaphoreSlot(String name, int i) {
        return semaphoreSlots(name) + "/" + i;
    }

    /**
     * @param name a semaphore's name
     * @return the node that records its limit: {@code <name>/limit} (the limit in decimal)
     */
    public static String semaphoreLimit(String name) {
        return Objects.requireNonNull(name, "name") + "/limit";
    }

    /**
     * @param node a claim's node
     * @return the node of {@code disco break}'s record of it: {@code /disco-broken<node>}
     */
    public static String breakRecord(String node) {
        return BREAK_ROOT + Objects.requireNonNull(node, "node");
    }

    /**
     * @param primitive what {@code name} is claimed as
     * @param name the name
     * @return the directory its claims queue in: {@code name}, for a semaphore {@link #semaphoreLeases}
     */
    public static String queueDir(Primitive primitive, String name) {
        Objects.requireNonNull(primitive, "primitive");
        return primitive == Primitive.SEMAPHORE ? semaphoreLeases(name) : Objects.requireNonNull(name, "name");
    }

    /**
     * The primitive a queue node is a claim of, told from its name as Curator's recipes write it ({@code lock-},
     * {@code __READ__}/{@code __WRIT__}, {@code lease-}, {@code latch-}).
     *
     * @param node a node's name or path
     * @return its primitive; empty for a node that is no claim (a directory, a marker)
     */
    public static Optional<Primitive> primitiveOf(String node) {
        NodeKind kind = NodeKind.of(NodeKind.name(Objects.requireNonNull(node, "node")));
        if (kind == null) {
            return Optional.empty();
        }
        return Optional.of(
                switch (kind) {
                    case LOCK -> Primitive.LOCK;
                    case READ, WRITE -> Primitive.RWLOCK;
                    case LEASE -> Primitive.SEMAPHORE;
                    case LATCH -> Primitive.ELECTION;
                });
    }

    /**
     * Whether {@code node} is one of {@code name}'s own claims: a node of {@code primitive}'s kind directly in its
     * {@linkplain #queueDir queue directory}. A name's claims never lie deeper (a name nested under it has a
     * directory of its own).
     *
     * @param primitive what {@code name} is claimed as
     * @param name the name
     * @param node a node's path
     * @return whether it is a claim of {@code name} itself
     */
    public static boolean isClaimOf(Primitive primitive, String name, String node) {
        String dir = queueDir(primitive, name);
        return node.length() > dir.length() + 1
                && node.startsWith(dir + "/")
                && node.indexOf('/', dir.length() + 1) < 0
                && primitiveOf(node).equals(Optional.of(primitive));
    }
}
