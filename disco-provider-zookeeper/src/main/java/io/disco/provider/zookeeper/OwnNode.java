package io.disco.provider.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * The own node of an acquisition: created ephemeral-sequential in Curator's protected mode
 * ({@code <dir>/_c_<uuid>-<kind><sequence>}), its stat confirmed, and its ephemeral owner checked against the
 * session that waits on it: a node left by an earlier session of the same client (found again by protected mode
 * after a lost answer, CURATOR-604) is never used.
 */
final class OwnNode {

    private OwnNode() {}

    /**
     * Creates the node, storing its stat in {@code stat} (left zero when Curator's protected mode found the node
     * again after a lost answer).
     *
     * @return the node's path
     */
    static String create(CuratorFramework c, String dir, NodeKind kind, byte[] data, Stat stat) throws Exception {
        return c.create()
                .storingStatIn(stat)
                .creatingParentContainersIfNeeded()
                .withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(ZKPaths.makePath(dir, kind.marker()), data);
    }

    /**
     * @param created the stat stored by {@link #create}
     * @return {@code created}, or the node's stat read again when the create's answer was lost; null if the node is gone
     */
    static Stat confirm(CuratorFramework c, String node, Stat created) throws Exception {
        return created.getCzxid() != 0 ? created : c.checkExists().forPath(node);
    }

    /**
     * @param own the own node's stat
     * @return null if the node belongs to {@code sessionId}, else why it must not be used
     */
    static String foreignOwner(String node, Stat own, long sessionId) {
        if (own.getEphemeralOwner() == sessionId) {
            return null;
        }
        return "its node " + node + " belongs to session 0x" + Long.toHexString(own.getEphemeralOwner())
                + ", not to this one (0x" + Long.toHexString(sessionId) + "): the session changed while it was created";
    }
}
