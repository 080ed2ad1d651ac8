package io.disco.provider.zookeeper;

import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;

/** Removing a queue service's own node: a held one with what goes with it, a pending one withdrawn for good. */
final class QueueNodes {

    private QueueNodes() {}

    /** Deletes the held node with the nodes that go with it, in one transaction; the own node alone if they are gone. */
    static void deleteHeld(CuratorFramework c, String node, List<CuratorOp> extra) throws Exception {
        if (extra.isEmpty()) {
            c.delete().forPath(node);
            return;
        }
        List<CuratorOp> ops = new ArrayList<>(extra);
        ops.add(c.transactionOp().delete().forPath(node));
        try {
            c.transaction().forOperations(ops);
        } catch (KeeperException.NoNodeException e) {
            // a node that went with the grant is gone (an operator): the own node alone; never the other node's
            // path again, which may be somebody else's by now
            c.delete().forPath(node);
        }
    }

    /** Withdraws a node that was never granted: Curator's guaranteed delete, retried in the background. */
    static void withdraw(CuratorFramework c, String node) {
        try {
            c.delete().guaranteed().forPath(node);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        } catch (Exception e) {
            // guaranteed: Curator retries in the background until it succeeds or the session ends
        }
    }
}
