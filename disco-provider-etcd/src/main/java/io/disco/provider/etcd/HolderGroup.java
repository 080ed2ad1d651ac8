package io.disco.provider.etcd;

import io.disco.fencing.DiscoException;
import io.etcd.jetcd.ByteSequence;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The services of one session that share one name, each a holder under its own key: one member of the
 * session's {@link ServiceRegistry} (the name's range is theirs alone: no service of another kind of the
 * session may share or nest with it), each holder found by its key. The semaphore is the one kind made
 * so ({@code EtcdSemaphoreService}: one lease may hold several permits of a semaphore); the group knows
 * no kind, only what a {@link Holder} is.
 *
 * <p>Its duties: hand out the lowest free holder index when a holder joins (the index is the holder's
 * key's, freed when it leaves: reusing a key of the same lease is what a new service on a name does after
 * a close for every kind), tell every holder when the session ends, and find the holder whose key a late
 * create made ({@link SessionMember#lateIncarnation}).
 *
 * <p>Join and leave run under the registry's holders lock; the lease thread reads {@link #holders}
 * without it.
 */
final class HolderGroup implements SessionMember {

    /** A service that may share its name with others of its session: a member with a key of its own. */
    interface Holder extends SessionMember {

        /** @return the holder's own key */
        ByteSequence ownKey();
    }

    private final String name;
    private final String kind;
    private final ConcurrentSkipListMap<Integer, Holder> holders = new ConcurrentSkipListMap<>();

    /** @param kind what the holders are called in messages ("semaphore") */
    HolderGroup(String name, String kind) {
        this.name = name;
        this.kind = kind;
    }

    /** @return the lowest index no holder of this name uses; registry's holders lock held */
    int freeIndex() {
        int i = 0;
        for (int used : holders.keySet()) {
            if (used != i) {
                break;
            }
            i++;
        }
        return i;
    }

    /** Registry's holders lock held. */
    void add(int index, Holder holder) {
        if (holders.putIfAbsent(index, holder) != null) {
            throw new IllegalStateException("holder index " + index + " of " + kind + " " + name + " is taken");
        }
    }

    /** @return whether no holder is left; registry's holders lock held */
    boolean remove(Holder holder) {
        holders.values().remove(holder);
        return holders.isEmpty();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String kind() {
        return kind;
    }

    @Override
    public void sessionLost(DiscoException cause) {
        holders.values().forEach(s -> s.sessionLost(cause));
    }

    @Override
    public void sessionClosed() {
        holders.values().forEach(Holder::sessionClosed);
    }

    /** Asks the holder whose key {@code key} is; none owns a key of a freed index (it is then deleted). */
    @Override
    public CompletableFuture<?> lateIncarnation(ByteSequence key, long createRevision) {
        for (Holder s : holders.values()) {
            if (s.ownKey().equals(key)) {
                return s.lateIncarnation(key, createRevision);
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return kind + " holders " + name + " " + holders.keySet();
    }
}
