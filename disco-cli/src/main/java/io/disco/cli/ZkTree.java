package io.disco.cli;

import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The nodes of a subtree of ZooKeeper as read, one {@code getChildren} per node (each within the command timeout),
 * for {@code disco list} and {@code disco leftovers}. Claim nodes ({@link ZooKeeperNodes#primitiveOf}: ephemeral,
 * so without children) and ZooKeeper's own {@code /zookeeper} are not read; a node that goes while the tree is read
 * is left out. Not one snapshot: what each command concludes from it, it checks again where it acts.
 */
final class ZkTree {

    /** One node: its stat and the names of its children. */
    record Node(String path, Stat stat, List<String> children) {

        /**
         * @return whether it is not ephemeral: a marker, a limit, a slot, a record, or a directory (ZooKeeper shows a
         *     container to clients as a persistent node)
         */
        boolean persistent() {
            return stat.getEphemeralOwner() == 0;
        }

        /** @return the paths of its children */
        List<String> childPaths() {
            return children.stream().map(c -> ZKPaths.makePath(path, c)).toList();
        }
    }

    private ZkTree() {}

    /**
     * Reads {@code root} and the nodes under it into which {@code descend} lets the walk go.
     *
     * @return the nodes by path, in path order (a parent before its children); empty when {@code root} does not exist
     */
    static Map<String, Node> read(ZooKeeper zk, String root, Predicate<String> descend) {
        Map<String, Node> nodes = new TreeMap<>();
        Deque<String> todo = new ArrayDeque<>();
        todo.push(root);
        while (!todo.isEmpty()) {
            String path = todo.pop();
            Node n = zk.await(
                    () -> {
                        Stat st = new Stat();
                        try {
                            return new Node(
                                    path,
                                    st,
                                    zk.client().getChildren().storingStatIn(st).forPath(path));
                        } catch (KeeperException.NoNodeException e) {
                            return null;
                        }
                    },
                    "read of the nodes under " + path);
            if (n == null) {
                continue;
            }
            nodes.put(path, n);
            for (String child : n.childPaths()) {
                if (!child.equals("/zookeeper")
                        && ZooKeeperNodes.primitiveOf(child).isEmpty()
                        && descend.test(child)) {
                    todo.push(child);
                }
            }
        }
        return nodes;
    }

    /**
     * @param prefix the start of paths wanted ({@code ""}: all)
     * @return a {@code descend} predicate for {@link #read} that goes only where a path starting with {@code prefix}
     *     can lie (into {@code /a} for the prefix {@code /a/b}, into {@code /a/bc} and {@code /a/b/c} too)
     */
    static Predicate<String> towards(String prefix) {
        return path -> path.startsWith(prefix) || prefix.startsWith(path + "/");
    }

    /** @return the deepest path from which every path starting with {@code prefix} lies in the subtree: {@code /} at least */
    static String base(String prefix) {
        int slash = prefix.lastIndexOf('/');
        return slash <= 0 ? "/" : prefix.substring(0, slash);
    }
}
