package io.disco.provider.zookeeper;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The kinds of queue node, named as Curator's recipes name them so that both queue in one order:
 * {@code InterProcessMutex}'s {@code lock-}, {@code InterProcessReadWriteLock}'s {@code __READ__} and
 * {@code __WRIT__}, {@code InterProcessSemaphoreV2}'s {@code lease-}, {@code LeaderLatch}'s {@code latch-}. A node is {@code _c_<uuid>-<name><10-digit sequence>} (Curator's protected mode); a queue
 * is ordered by the sequence, as Curator's lock drivers order it.
 */
enum NodeKind {
    /** A lock's node. */
    LOCK("lock-"),
    /** A read/write lock's reader. */
    READ("__READ__"),
    /** A read/write lock's writer. */
    WRITE("__WRIT__"),
    /** A semaphore's holder (InterProcessSemaphoreV2's lease). */
    LEASE("lease-"),
    /** An election's candidate (LeaderLatch's latch). */
    LATCH("latch-");

    private final String marker;

    NodeKind(String marker) {
        this.marker = marker;
    }

    /** @return the name part Curator writes before the sequence */
    String marker() {
        return marker;
    }

    /** @return whether {@code name} is a node of this kind */
    boolean names(String name) {
        return name.contains(marker);
    }

    /** @return the nodes among {@code children} of any of {@code kinds}, in queue (sequence) order */
    static List<String> queue(List<String> children, List<NodeKind> kinds) {
        List<String> q = new ArrayList<>();
        for (String c : children) {
            for (NodeKind k : kinds) {
                if (k.names(c)) {
                    q.add(c);
                    break;
                }
            }
        }
        q.sort(Comparator.comparing(NodeKind::sequence));
        return q;
    }

    /** The part of a node name that Curator sorts by: what follows the last marker of any kind. */
    static String sequence(String name) {
        int at = -1;
        int len = 0;
        for (NodeKind k : values()) {
            int i = name.lastIndexOf(k.marker);
            if (i > at) {
                at = i;
                len = k.marker.length();
            }
        }
        return at < 0 ? name : name.substring(at + len);
    }

    /** @return the kind of a node name, or null */
    static NodeKind of(String name) {
        for (NodeKind k : values()) {
            if (k.names(name)) {
                return k;
            }
        }
        return null;
    }

    /** @return the last segment of a path */
    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
