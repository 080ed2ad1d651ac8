package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The semaphore services of one session on one name: each holds (or waits for) its own permit under
 * its own holder key, so one lease may hold several permits of a semaphore. They are one member of the
 * session's {@link ServiceRegistry} (the name's range is theirs alone: no lock, election or read/write
 * lock of the session may share or nest with it), and each is found by its key.
 *
 * <p>Holder keys: index 0 is {@code <prefix>/<lease id in hex>}, the Go disco semaphore's key; index
 * {@code n > 0} is {@code <prefix>/<lease id in hex>-<n>}. Every one of them lies directly under
 * {@code <prefix>/}, where Go's semaphore and this library's count holders, so each counts as one holder
 * for everybody. A key never names another lease's holder ({@code '-'} is no hex digit). An index is
 * taken by the lowest free one when a service is made and freed when it is closed: reusing a key of the
 * same lease is what a new service on a name does after a close for every kind, with the same caveat (a
 * withdrawal that etcd had not confirmed within the close's request timeout may still delete the
 * incarnation a new claim adopted; that claim then fails as lost, it never holds two places).
 *
 * <p>Join and leave run under the registry's holders lock; the lease thread reads {@link #services}
 * without it.
 */
final class SemaphoreHolders implements SessionMember {

    private final String prefix;
    private final ConcurrentSkipListMap<Integer, EtcdSemaphoreService> services = new ConcurrentSkipListMap<>();

    SemaphoreHolders(String prefix) {
        this.prefix = prefix;
    }

    /** The holder key of index {@code index} of lease {@code leaseHex} on {@code prefix}. */
    static String holderKey(String prefix, String leaseHex, int index) {
        return index == 0 ? prefix + "/" + leaseHex : prefix + "/" + leaseHex + "-" + index;
    }

    /** @return the lowest index no service of this name uses; registry's holders lock held */
    int freeIndex() {
        int i = 0;
        for (int used : services.keySet()) {
            if (used != i) {
                break;
            }
            i++;
        }
        return i;
    }

    /** Registry's holders lock held. */
    void add(int index, EtcdSemaphoreService service) {
        if (services.putIfAbsent(index, service) != null) {
            throw new IllegalStateException("holder index " + index + " of semaphore " + prefix + " is taken");
        }
    }

    /** @return whether no service is left; registry's holders lock held */
    boolean remove(EtcdSemaphoreService service) {
        services.values().remove(service);
        return services.isEmpty();
    }

    @Override
    public String prefix() {
        return prefix;
    }

    @Override
    public String kind() {
        return "semaphore";
    }

    @Override
    public void sessionLost(DiscoException cause) {
        services.values().forEach(s -> s.sessionLost(cause));
    }

    @Override
    public void sessionClosed() {
        services.values().forEach(EtcdSemaphoreService::sessionClosed);
    }

    /** Asks the service whose holder key {@code key} is; none owns a key of a freed index (it is then deleted). */
    @Override
    public CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision) {
        for (EtcdSemaphoreService s : services.values()) {
            if (s.ownKey().equals(key)) {
                return s.lateIncarnation(key, createRevision);
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "semaphore holders " + prefix + " " + services.keySet();
    }
}
