package io.disco.chaos;

import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;

/**
 * The cluster a chaos run injects faults into, whatever the backend: its members' client addresses (the
 * owners' proxies forward to them), what the owners and the resource are given to reach it, the member faults
 * of the {@link Nemesis} (and, through {@link #network()} and {@link #peerLinks()}, its network faults), the
 * check that it recovered, and the holders' nodes or keys a run left behind.
 */
interface Members extends AutoCloseable {

    /** @return the backend's name, as {@code --backend} takes it */
    String backend();

    /**
     * @return what the members run, for the report's header: for etcd its version and binary
     *     ({@code etcd 3.5.16 at /path/etcd}), for ZooKeeper its version
     */
    default String server() {
        return backend();
    }

    int size();

    /** @return each member's client address, in member order */
    List<InetSocketAddress> clientAddresses();

    /**
     * @param clientAddress an index into {@link #clientAddresses()} (an owner's proxy)
     * @return the member whose network namespace that address is in: the index itself by default (Redis: a sentinel
     *     is in its data server's)
     */
    default int memberOf(int clientAddress) {
        return clientAddress;
    }

    /** @return an owner's endpoints argument ({@link OwnerBackend}) for its proxies on {@code ports} */
    String ownerEndpoints(List<Integer> ports);

    /** @return the resource's arguments for its guard's issued bound ({@link ResourceMain}) */
    List<String> resourceArguments();

    void kill(int member);

    /** Starts a killed member again as the same member. */
    void startMember(int member);

    void pause(int member);

    void resume(int member);

    /** @return the index of the member that leads now, or -1 when none answers */
    int leader();

    /** @return empty when every member is healthy with one leader within {@code timeoutNanos}, else what was last seen */
    Optional<String> awaitRecovered(long timeoutNanos) throws InterruptedException;

    /** @return the members' network namespaces, when they run in some */
    Optional<MemberNetwork> network();

    /** @return the proxies in front of the members' peer ports, when they have some */
    Optional<PeerLinks> peerLinks();

    /**
     * @return whether these members can be dealt the fault {@code kind}: the {@link Nemesis#NET_KINDS}
     *     need a {@link #network()} (the {@link Nemesis#PEER_KINDS} also {@link #peerLinks()}), and
     *     {@code compact} a history ({@link #compact()}); the {@link Nemesis#REDIS_KINDS} a {@link RedisMembers}
     *     (which deals the member partitions when networked, and no peer-link kind)
     */
    default boolean deals(String kind) {
        if (Nemesis.REDIS_KINDS.contains(kind)) {
            return false;
        }
        if (Nemesis.PEER_KINDS.contains(kind)) {
            return network().isPresent() && peerLinks().isPresent();
        }
        if (Nemesis.NET_KINDS.contains(kind)) {
            return network().isPresent();
        }
        return !kind.equals("compact") || hasHistory();
    }

    /**
     * @return what the members did on their own during the run, as faults of type {@value RedisMembers#FAILOVER}
     *     (a Sentinel's promotion of a replica, at the moment it was first seen); none by default
     */
    default List<Observations.Fault> observed() {
        return List.of();
    }

    /** @return whether {@link #compact()} has a history to compact */
    boolean hasHistory();

    /** Compacts the history, where the backend has one to compact (etcd). */
    void compact() throws Exception;

    /**
     * @return how many holders' keys or nodes are left under {@code name}, waiting up to
     *     {@code 2 * ttl + 2 s} for expired ones to go
     */
    long keysLeft(String name, long ttlNanos) throws Exception;

    @Override
    void close();
}
