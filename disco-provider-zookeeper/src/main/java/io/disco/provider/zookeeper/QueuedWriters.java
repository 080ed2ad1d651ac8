package io.disco.provider.zookeeper;

import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.zookeeper.KeeperException;

/**
 * Whether a writer has queued behind one read grant of a read/write lock (issue 45): a writer's node with a
 * sequence after the reader's own waits for it (a writer waits for every node before its own). The lock's
 * children are read with a watch, re-armed on every change until such a writer shows up, which sets
 * {@link #queued()} for good. Nothing here blocks; the answer lags ZooKeeper by about a round trip.
 */
final class QueuedWriters {

    private final CuratorFramework client;
    private final String path;
    /** The reader's own node (its name, without the path). */
    final String readerNode;

    private final String readerSequence;
    private volatile boolean queued;
    private volatile boolean closed;

    QueuedWriters(CuratorFramework client, String path, String readerNode) {
        this.client = client;
        this.path = path;
        this.readerNode = readerNode.substring(readerNode.lastIndexOf('/') + 1);
        this.readerSequence = NodeKind.sequence(this.readerNode);
        read();
    }

    /** @return whether a writer queued behind the read grant (final once true) */
    boolean queued() {
        return queued;
    }

    private void read() {
        if (closed || queued) {
            return;
        }
        CuratorWatcher again = event -> read();
        try {
            client.getChildren()
                    .usingWatcher(again)
                    .inBackground((c, event) -> {
                        if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                            seen(event.getChildren());
                        } else if (event.getResultCode() != KeeperException.Code.NONODE.intValue()) {
                            read(); // a connection loss: read again (the session's own handling bounds how long)
                        }
                    })
                    .forPath(path);
        } catch (Exception e) {
            // the client is closing: nothing to learn any more
        }
    }

    private void seen(List<String> children) {
        for (String child : children) {
            if (NodeKind.WRITE.names(child) && NodeKind.sequence(child).compareTo(readerSequence) > 0) {
                queued = true;
                return;
            }
        }
    }

    /** Stops re-arming: the read grant ended. */
    void close() {
        closed = true;
    }
}
