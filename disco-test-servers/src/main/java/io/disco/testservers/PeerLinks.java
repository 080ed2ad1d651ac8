package io.disco.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link TcpProxy} in front of each of a member's peer ports: members advertise the proxies' address
 * (etcd as its peer URL in {@code --initial-cluster} and {@code --initial-advertise-peer-urls}; a ZooKeeper
 * member in the {@code server.<id>} lines, for its quorum and its election port) and listen on the real one,
 * so all traffic between members passes through these proxies and can be slowed or made lossy
 * ({@link TcpProxy.Link}), which the kernel here cannot do (no {@code netem}).
 *
 * <p>In a {@link MemberNetwork} the proxy of member {@code i} listens on
 * {@link MemberNetwork#peerAddress(int)} and forwards a connection dialed by member {@code j} from
 * {@code peerAddress(j)}, so the members still see who talks to them and {@link MemberNetwork#cut}
 * still cuts them apart; {@link #degrade(int, TcpProxy.Link)} then slows every peer connection of one
 * member (those dialed to it and those it dialed), both ways. On loopback the dialers cannot be told
 * apart and only {@link #degradeAll} is offered. Instances are thread-safe; the cluster closes them.
 */
public final class PeerLinks implements AutoCloseable {

    /** Each member's proxies, one per peer port, in member order. */
    private final List<List<TcpProxy>> proxies;

    private final MemberNetwork network;

    private PeerLinks(List<List<TcpProxy>> proxies, MemberNetwork network) {
        this.proxies = proxies.stream().map(List::copyOf).toList();
        this.network = network;
    }

    /** Proxies to {@code network.address(i):port} on {@code network.peerAddress(i):port}, for each of the ports. */
    static PeerLinks networked(MemberNetwork network, int... peerPorts) {
        Function<InetAddress, InetAddress> sourceFor = dialer -> {
            for (int j = 0; j < network.size(); j++) {
                if (dialer.getHostAddress().equals(network.address(j))) {
                    return inet(network.peerAddress(j));
                }
            }
            return null;
        };
        List<List<TcpProxy>> list = new ArrayList<>();
        try {
            for (int i = 0; i < network.size(); i++) {
                List<TcpProxy> mine = new ArrayList<>();
                list.add(mine);
                for (int port : peerPorts) {
                    mine.add(new TcpProxy(
                            new InetSocketAddress(inet(network.peerAddress(i)), port),
                            new InetSocketAddress(network.address(i), port),
                            sourceFor));
                }
            }
        } catch (IOException e) {
            list.forEach(mine -> mine.forEach(TcpProxy::close));
            throw new UncheckedIOException("cannot start the peer proxies", e);
        }
        return new PeerLinks(list, network);
    }

    /** Proxies on free loopback ports to {@code 127.0.0.1:peerPorts[i]}. */
    static PeerLinks loopback(int[] peerPorts) {
        List<List<TcpProxy>> list = new ArrayList<>();
        try {
            for (int port : peerPorts) {
                list.add(List.of(new TcpProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))));
            }
        } catch (IOException e) {
            list.forEach(mine -> mine.forEach(TcpProxy::close));
            throw new UncheckedIOException("cannot start the peer proxies", e);
        }
        return new PeerLinks(list, null);
    }

    /**
     * @param member the member index
     * @return the peer URL member {@code member} advertises: its proxy's
     */
    String advertisedPeerUrl(int member) {
        TcpProxy p = proxies.get(Objects.checkIndex(member, proxies.size())).get(0);
        return "http://" + (network == null ? "127.0.0.1" : network.peerAddress(member)) + ":" + p.port();
    }

    /** @return the number of members */
    public int size() {
        return proxies.size();
    }

    /**
     * Slows or stalls every peer connection of one member, both ways: those the others dialed to it
     * and those it dialed to them. {@link TcpProxy.Link#CLEAN} heals them.
     *
     * @param member the member index
     * @param link the link
     * @throws IndexOutOfBoundsException if there is no such member
     * @throws UnsupportedOperationException on loopback, where the dialers cannot be told apart
     */
    public void degrade(int member, TcpProxy.Link link) {
        Objects.checkIndex(member, proxies.size());
        Objects.requireNonNull(link, "link");
        if (network == null) {
            throw new UnsupportedOperationException("one member's peer links can be degraded only in a MemberNetwork"
                    + " (EtcdCluster.startNetworked); on loopback use degradeAll");
        }
        InetAddress dialer = inet(network.address(member));
        for (int i = 0; i < proxies.size(); i++) {
            for (TcpProxy p : proxies.get(i)) {
                if (i == member) {
                    p.degrade(link);
                } else {
                    p.degradeFrom(dialer, link);
                }
            }
        }
    }

    /**
     * Slows or stalls every peer connection; {@link TcpProxy.Link#CLEAN} heals them.
     *
     * @param link the link
     */
    public void degradeAll(TcpProxy.Link link) {
        Objects.requireNonNull(link, "link");
        proxies.forEach(mine -> mine.forEach(p -> p.degrade(link)));
    }

    /** Heals every peer link, also those degraded for one member. */
    public void healAll() {
        for (int i = 0; i < proxies.size(); i++) {
            if (network != null) {
                degrade(i, TcpProxy.Link.CLEAN);
            }
        }
        degradeAll(TcpProxy.Link.CLEAN);
    }

    private static InetAddress inet(String address) {
        try {
            return InetAddress.getByName(address);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        proxies.forEach(mine -> mine.forEach(TcpProxy::close));
    }
}
