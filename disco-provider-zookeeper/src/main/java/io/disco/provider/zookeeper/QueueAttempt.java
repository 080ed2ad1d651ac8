package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.WorkedAcquisition;
import io.disco.fencing.Fenced;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.Watcher;

/**
 * One acquisition of a queue service: what it asks for (its kind, one try or a wait, its node's data), its
 * outcome ({@link #future}), and its own node once created. Run by a worker ({@link QueueWorker}), which alone
 * creates and withdraws the node; the caller waits on {@link #future} and, when it gives up, on
 * {@link #withdrawn}. Its {@link #watcher} wakes the worker on every event it waits for, and reports the own
 * node's deletion and data change to the service ({@link OwnNodeEvents}), which keeps the watcher for the node
 * once the node is held.
 *
 * @param <G> the grant
 */
final class QueueAttempt<G extends Fenced> extends WorkedAcquisition<G> {

    final NodeKind kind;
    /** The own node's data (an election candidate's value; empty for the locks). */
    final byte[] data;

    volatile String node;
    /** Wakes the worker; reports the own node's deletion (and a data change, after which it is watched again). */
    final CuratorWatcher watcher;

    /** What the service hears of the own node, from ZooKeeper's event thread: hand over, never block. */
    interface OwnNodeEvents {

        /** The own node {@code node} was deleted. */
        void ownNodeDeleted(String node);

        /** The own node {@code node}'s data changed: a watch fires once, so the held node is watched again. */
        void ownNodeChanged(String node);
    }

    QueueAttempt(OwnNodeEvents events, NodeKind kind, boolean tryOnly, byte[] data) {
        super(tryOnly);
        this.kind = kind;
        this.data = data;
        this.watcher = event -> {
            wake.release();
            if (event.getType() == Watcher.Event.EventType.NodeDeleted
                    && event.getPath() != null
                    && event.getPath().equals(node)) {
                events.ownNodeDeleted(event.getPath());
            } else if (event.getType() == Watcher.Event.EventType.NodeDataChanged
                    && event.getPath() != null
                    && event.getPath().equals(node)) {
                events.ownNodeChanged(event.getPath()); // a watch fires once: keep watching for the deletion
            }
        };
    }
}
