package io.disco.provider.zookeeper;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The queue of a lock as Curator's {@code InterProcessMutex} keeps it: children named
 * {@code _c_<uuid>-lock-<sequence>} (protected mode), ordered by the sequence after {@code lock-}, as
 * {@code StandardLockInternalsDriver} orders them; the first holds the lock, each other waits on its predecessor.
 */
final class LockNodes {

    /** The name prefix of a lock node, as {@code InterProcessMutex} writes it. */
    static final String LOCK_NAME = "lock-";

    private LockNodes() {
    }

    /** @return the children that are lock nodes, in queue order */
    static List<String> queue(List<String> children) {
        List<String> q = new ArrayList<>();
        for (String c : children) {
            if (c.contains(LOCK_NAME)) {
                q.add(c);
            }
        }
        q.sort(Comparator.comparing(LockNodes::sequence));
        return q;
    }

    /** The part of a node name that Curator sorts by: what follows the last {@code lock-}. */
    static String sequence(String name) {
        return name.substring(name.lastIndexOf(LOCK_NAME) + LOCK_NAME.length());
    }

    /** @return the last segment of a path */
    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
