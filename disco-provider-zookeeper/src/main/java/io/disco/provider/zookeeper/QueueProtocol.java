package io.disco.provider.zookeeper;

import java.util.List;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * How one primitive queues on ZooKeeper: the hooks a queue service supplies to the acquire machine
 * ({@link QueueWorker}) and to its release ({@link QueueRelease}). What they share (the own node, the waiting, the
 * commit, the release, the loss) is not here: a primitive says only which nodes make up its queue, which node an
 * own node waits for, how an admitted node becomes a grant, and what goes with a release.
 *
 * @param <G> the grant
 */
abstract class QueueProtocol<G> {

    /** The primitive's name. */
    final String name;
    /** What the primitive is, for messages: "lock", "read/write lock", "semaphore", "election". */
    private final String what;

    QueueProtocol(String name, String what) {
        this.name = name;
        this.what = what;
    }

    /** @return what this is, for messages: "lock", "read/write lock" */
    final String what() {
        return what;
    }

    /** @return the kinds of node that make up this primitive's queue */
    abstract List<NodeKind> queueKinds();

    /**
     * @param queue the queue, in order
     * @param own the own node's index in it
     * @param kind the own node's kind
     * @return the name of the node to wait for, or null once the own node is admitted
     */
    abstract String blocker(List<String> queue, int own, NodeKind kind);

    /**
     * Makes the grant of an admitted node (on the worker, outside every lock).
     *
     * @param node the own node
     * @param kind its kind
     * @param own its stat, read after it was created
     * @return the grant
     * @throws KeeperException.NoNodeException if the own node is gone
     * @throws Exception if ZooKeeper failed
     */
    abstract G grant(String node, NodeKind kind, Stat own) throws Exception;

    /**
     * Makes the grant of an admitted node whose own node was created with {@code data}; calls
     * {@link #grant(String, NodeKind, Stat)} by default (the nodes of locks carry no data).
     */
    G grant(String node, NodeKind kind, Stat own, byte[] data) throws Exception {
        return grant(node, kind, own);
    }

    /**
     * A node below this primitive's directory, in a nested name's directory, that must be gone before an admitted
     * node of {@code kind} is granted; none by default.
     *
     * @param children the directory's children, all of them
     * @param kind the own node's kind
     * @param ownCzxid the own node's czxid
     * @return the node's name relative to this primitive's name, or null
     * @throws Exception if ZooKeeper failed
     */
    String nestedBlocker(List<String> children, NodeKind kind, long ownCzxid) throws Exception {
        return null;
    }

    /** @return the directory the queue's nodes live in; the primitive's name by default */
    String queueDir() {
        return name;
    }

    /** @return whether a blocked claim waits for any change of the queue (a semaphore) rather than for its blocker */
    boolean waitsOnDirectory() {
        return false;
    }

    /**
     * @param held a held grant
     * @return operations that go with the deletion of the own node, in its transaction (a semaphore frees its
     *         slot); none by default
     */
    List<CuratorOp> releaseOps(G held) {
        return List.of();
    }

    /** @return how a grant of {@code kind} is called in messages */
    String modeName(NodeKind kind) {
        return kind == NodeKind.READ
                ? "read"
                : kind == NodeKind.WRITE ? "write" : kind == NodeKind.LEASE ? "permit" : "lock";
    }
}
