package io.disco.provider.zookeeper;

import io.disco.client.Names;
import org.apache.curator.utils.PathUtils;

/**
 * Where this library's nodes live on ZooKeeper, for the services that write them and the listing that reads them
 * ({@link ZkClaimantListing}), and the rule a primitive's name must pass first. A queue's own nodes are named by
 * {@link NodeKind}; this class names the paths around them:
 * <ul>
 *   <li>a read/write lock's phase marker {@code /disco-rwlock-phase<name>}, outside every lock directory;</li>
 *   <li>a semaphore's queue {@code <name>/leases}, its slots {@code <name>/slots/<i>} and its recorded limit
 *       {@code <name>/limit}.</li>
 * </ul>
 */
final class NodeLayout {

    /** Where the read/write locks' phase markers live: outside every lock directory. */
    static final String PHASE_ROOT = "/disco-rwlock-phase";

    private NodeLayout() {}

    /**
     * The name rule of every backend and of the client ({@link Names}), then ZooKeeper's own path rule.
     *
     * @return {@code name}
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank or not a valid ZooKeeper name
     */
    static String checkName(String name) {
        Names.check(name); // the name rule of every backend and of the client, up front
        PathUtils.validatePath(name);
        return name;
    }

    /** @return the phase marker of the read/write lock on {@code name} */
    static String phaseMarker(String name) {
        return PHASE_ROOT + name;
    }

    /** @return the directory the phase marker of the read/write lock on {@code name} lives in */
    static String phaseMarkerDir(String name) {
        int i = name.lastIndexOf('/');
        return PHASE_ROOT + (i <= 0 ? "" : name.substring(0, i));
    }

    /** @return the directory the holders of the semaphore on {@code name} queue in */
    static String semaphoreLeases(String name) {
        return name + "/leases";
    }

    /** @return the directory of the slots of the semaphore on {@code name} */
    static String semaphoreSlots(String name) {
        return name + "/slots";
    }

    /** @return the slot {@code i} of the semaphore on {@code name} */
    static String semaphoreSlot(String name, int i) {
        return semaphoreSlots(name) + "/" + i;
    }

    /** @return the node that records the limit of the semaphore on {@code name} */
    static String semaphoreLimit(String name) {
        return name + "/limit";
    }
}
