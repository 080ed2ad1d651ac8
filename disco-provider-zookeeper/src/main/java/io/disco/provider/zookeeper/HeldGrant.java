package io.disco.provider.zookeeper;

import io.disco.core.internal.grant.Held;
import org.apache.curator.framework.api.CuratorWatcher;

/**
 * A grant a queue service holds: the grant handed to the user, its kind, its own node, and the watcher of the
 * acquisition that committed it, which keeps watching that node for its deletion by anybody else (the loss), and
 * when it was committed ({@link System#nanoTime()}).
 *
 * @param <G> the grant
 */
record HeldGrant<G>(G grant, NodeKind kind, String node, CuratorWatcher watcher, long sinceNanos) implements Held<G> {

    /** The same node with another grant (an election's proclamation: the same term with a new value). */
    HeldGrant<G> withGrant(G replacement) {
        return new HeldGrant<>(replacement, kind, node, watcher, sinceNanos);
    }
}
