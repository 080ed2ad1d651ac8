package io.disco.cli;

import io.disco.core.Primitive;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The names in use at or under a prefix on ZooKeeper, for {@code disco list}: the nodes at and under the prefix are
 * read ({@link ZkTree}) and each directory's kind told from its children as {@link ZkLayout} tells it (a directory
 * with claim nodes, a semaphore's {@code leases} or {@code limit}); a read/write lock's phase marker under
 * {@link ZooKeeperNodes#PHASE_ROOT} names its lock even when nothing is left in its directory. A semaphore's own
 * directories ({@code leases}, {@code slots}, and {@code locks}, the internal mutex of Curator's
 * {@code InterProcessSemaphoreV2}) are parts of it, never names of their own.
 */
final class ZkNames {

    private ZkNames() {}

    /**
     * @param prefix a path, or {@code /} for every name
     * @return the names at or under {@code prefix} with their kinds, in name order
     */
    static Map<String, Primitive> under(ZooKeeper zk, String prefix) {
        boolean all = "/".equals(prefix);
        String markers = all ? ZooKeeperNodes.PHASE_ROOT : ZooKeeperNodes.phaseMarker(prefix);
        Set<String> phased = new HashSet<>();
        for (ZkTree.Node n : ZkTree.read(zk, markers, p -> true).values()) {
            if (ZooKeeperNodes.isPhaseMarker(n.stat()) && n.path().length() > ZooKeeperNodes.PHASE_ROOT.length()) {
                phased.add(n.path().substring(ZooKeeperNodes.PHASE_ROOT.length()));
            }
        }
        Map<String, Primitive> names = new TreeMap<>();
        Set<String> parts = new HashSet<>();
        for (ZkTree.Node n : ZkTree.read(zk, prefix, p -> !isOurs(p)).values()) {
            String name = n.path();
            if ("/".equals(name) || isOurs(name) || parts.contains(name)) {
                continue;
            }
            Optional<Primitive> kind = ZkLayout.kind(name, n.children(), phased.remove(name));
            kind.ifPresent(k -> names.put(name, k));
            if (kind.equals(Optional.of(Primitive.SEMAPHORE))) {
                parts.add(ZooKeeperNodes.semaphoreLeases(name));
                parts.add(ZooKeeperNodes.semaphoreSlots(name));
                parts.add(name + "/locks");
            }
        }
        for (String name : phased) { // a marker whose lock's directory is gone: shown with 0 holders
            if (all || name.equals(prefix) || name.startsWith(prefix + "/")) {
                names.put(name, Primitive.RWLOCK);
            }
        }
        return names;
    }

    /** @return whether {@code path} lies in the tool's or the provider's own trees (phase markers, break records) */
    private static boolean isOurs(String path) {
        for (String root : new String[] {ZooKeeperNodes.PHASE_ROOT, ZooKeeperNodes.BREAK_ROOT}) {
            if (path.equals(root) || path.startsWith(root + "/")) {
                return true;
            }
        }
        return false;
    }
}
