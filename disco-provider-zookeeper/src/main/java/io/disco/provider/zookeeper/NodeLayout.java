package io.disco.provider.zookeeper;

import io.disco.client.Names;
import org.apache.curator.utils.PathUtils;

/**
 * Where this library's nodes live on ZooKeeper, for the services that write them and the listing that reads them
 * ({@link ZkClaimantListing}), and the rule a primitive's path must pass first. A queue's own nodes are named by
 * {@link NodeKind}; this class names the paths around them:
 * <ul>
 *   <li>a read/write lock's phase marker {@code /disco-rwlock-phase<path>}, outside every lock directory;</li>
 *   <li>a semaphore's queue {@code <path>/leases}, its slots {@code <path>/slots/<i>} and its recorded limit
 *       {@code <path>/limit}.</li>
 * </ul>
 */
final class NodeLayout {

    /** Where the read/write locks' phase markers live: outside every lock directory. */
    static final String PHASE_ROOT = "/disco-rwlock-phase";

    private NodeLayout() {}

    /**
     * The name rule of every backend and of the client ({@link Names}), then ZooKeeper's own path rule.
     *
     * @return {@code path}
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code path} is blank or not a valid ZooKeeper path
     */
    static String checkPath(String path) {
        Names.check(path, "path"); // the name rule of every backend and of the client, up front
        PathUtils.validatePath(path);
        return path;
    }

    /** @return the phase marker of the read/write lock on {@code path} */
    static String phaseMarker(String path) {
        return PHASE_ROOT + path;
    }

    /** @return the directory the phase marker of the read/write lock on {@code path} lives in */
    static String phaseMarkerDir(String path) {
        int i = path.lastIndexOf('/');
        return PHASE_ROOT + (i <= 0 ? "" : path.substring(0, i));
    }

    /** @return the directory the holders of the semaphore on {@code path} queue in */
    static String semaphoreLeases(String path) {
        return path + "/leases";
    }

    /** @return the directory of the slots of the semaphore on {@code path} */
    static String semaphoreSlots(String path) {
        return path + "/slots";
    }

    /** @return the slot {@code i} of the semaphore on {@code path} */
    static String semaphoreSlot(String path, int i) {
        return semaphoreSlots(path) + "/" + i;
    }

    /** @return the node that records the limit of the semaphore on {@code path} */
    static String semaphoreLimit(String path) {
        return path + "/limit";
    }
}
