package io.disco.cli;

import io.disco.core.Primitive;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.util.List;
import java.util.Optional;
import org.apache.zookeeper.KeeperException;

/**
 * Which primitive a name is claimed as on ZooKeeper, told from its nodes (the layout is the provider's
 * {@link ZooKeeperNodes}, the one the library writes and Curator's recipes share). Unlike etcd's keys, ZooKeeper's
 * node names say their kind:
 * <ul>
 *   <li>read/write lock: a {@code __READ__} or {@code __WRIT__} node in {@code <name>}, or the phase marker
 *       {@code /disco-rwlock-phase<name>};</li>
 *   <li>semaphore: {@code <name>/leases} (the queue of this library's and {@code InterProcessSemaphoreV2}'s holders)
 *       or {@code <name>/limit};</li>
 *   <li>lock: a {@code lock-} node in {@code <name>} ({@code InterProcessMutex}'s; a {@code LeaderSelector}'s leader
 *       is such a holder);</li>
 *   <li>election: a {@code latch-} node in {@code <name>} ({@code LeaderLatch}'s).</li>
 * </ul>
 */
final class ZkLayout {

    private ZkLayout() {}

    /** @return the primitive of {@code name} from the nodes present, or empty when no node of it exists */
    static Optional<Primitive> detect(ZooKeeper zk, String name) {
        return zk.await(
                () -> {
                    List<String> children;
                    try {
                        children = zk.client().getChildren().forPath(name);
                    } catch (KeeperException.NoNodeException e) {
                        children = List.of();
                    }
                    boolean phase = zk.client().checkExists().forPath(ZooKeeperNodes.phaseMarker(name)) != null;
                    return kind(name, children, phase);
                },
                "read of the nodes of " + name);
    }

    /**
     * The primitive of {@code name} from what was read of it: its children's names and whether its phase marker
     * exists; empty when none of it tells.
     */
    static Optional<Primitive> kind(String name, List<String> children, boolean phaseMarker) {
        if (phaseMarker || children.stream().anyMatch(c -> is(c, Primitive.RWLOCK))) {
            return Optional.of(Primitive.RWLOCK);
        }
        if (children.stream()
                .map(c -> name + "/" + c)
                .anyMatch(p -> p.equals(ZooKeeperNodes.semaphoreLeases(name))
                        || p.equals(ZooKeeperNodes.semaphoreLimit(name)))) {
            return Optional.of(Primitive.SEMAPHORE);
        }
        for (Primitive p : List.of(Primitive.LOCK, Primitive.ELECTION)) {
            if (children.stream().anyMatch(c -> is(c, p))) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static boolean is(String node, Primitive p) {
        return ZooKeeperNodes.primitiveOf(node).equals(Optional.of(p));
    }

    /** @return why nothing holds or waits for {@code name} on ZooKeeper: the nodes looked for, and the zkCli.sh to look by hand */
    static String nothingHolds(String name) {
        return "nothing holds or waits for " + name + ": no claim node in " + name + " and no marker of it ("
                + ZooKeeperNodes.phaseMarker(name) + ", " + ZooKeeperNodes.semaphoreLimit(name)
                + "); check the name (zkCli.sh ls " + name + ")";
    }
}
