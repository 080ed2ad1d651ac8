package io.disco.chaos;

import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import io.disco.testservers.ZooKeeperEnsemble;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A chaos run's ZooKeeper: a 3-member {@link ZooKeeperEnsemble} of server processes on loopback, or each member
 * in a network namespace of its own ({@link ZooKeeperEnsemble#startNetworked}), where the nemesis also deals it
 * the member partitions and peer-link faults of {@link NetworkFaults} (both of a member's peer ports, quorum and
 * election, are behind its {@link PeerLinks} proxies). It has no history to compact: that kind is not dealt to it.
 */
final class ZkMembers implements Members {

    private final ZooKeeperEnsemble zk;

    ZkMembers(boolean networked) {
        this.zk = networked ? ZooKeeperEnsemble.startNetworked(3) : ZooKeeperEnsemble.start(3);
    }

    @Override
    public String backend() {
        return "zookeeper";
    }

    /** @return {@code ZooKeeper 3.9.3}: the members run the server of the ZooKeeper jar on the suite's class path */
    @Override
    public String server() {
        return "ZooKeeper " + org.apache.zookeeper.Version.getFullVersion().replaceFirst("[-,\\s].*", "");
    }

    @Override
    public int size() {
        return zk.size();
    }

    @Override
    public List<InetSocketAddress> clientAddresses() {
        List<InetSocketAddress> list = new ArrayList<>();
        for (int i = 0; i < zk.size(); i++) {
            String cs = zk.connectString(i);
            list.add(new InetSocketAddress(
                    cs.substring(0, cs.lastIndexOf(':')), Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1))));
        }
        return list;
    }

    @Override
    public String ownerEndpoints(List<Integer> ports) {
        return OwnerBackend.ZOOKEEPER
                + String.join(",", ports.stream().map(p -> "127.0.0.1:" + p).toList());
    }

    @Override
    public List<String> resourceArguments() {
        return List.of("--zookeeper", zk.connectString());
    }

    @Override
    public void kill(int member) {
        zk.kill(member);
    }

    @Override
    public void startMember(int member) {
        zk.restart(member);
    }

    @Override
    public void pause(int member) {
        zk.freeze(member);
    }

    @Override
    public void resume(int member) {
        zk.thaw(member);
    }

    /** @return the member that says it leads, or -1 when none does now */
    @Override
    public int leader() {
        List<String> modes = zk.modes();
        return modes.indexOf("leader");
    }

    @Override
    public Optional<String> awaitRecovered(long timeoutNanos) {
        zk.network().ifPresent(MemberNetwork::healAll);
        try {
            zk.awaitHealthy(Duration.ofNanos(timeoutNanos));
            return Optional.empty();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
    }

    @Override
    public Optional<MemberNetwork> network() {
        return zk.network();
    }

    @Override
    public Optional<PeerLinks> peerLinks() {
        return zk.peerLinks();
    }

    @Override
    public boolean hasHistory() {
        return false;
    }

    @Override
    public void compact() {
        throw new UnsupportedOperationException("ZooKeeper has no history to compact");
    }

    /** Ephemeral nodes (holders', waiters') under the name: a session the server has not expired yet keeps its. */
    @Override
    public long keysLeft(String name, long ttlNanos) throws Exception {
        try (CuratorFramework c =
                CuratorFrameworkFactory.newClient(zk.connectString(), 10_000, 5_000, new RetryNTimes(3, 100))) {
            c.start();
            long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
            while (true) {
                long left = ephemerals(c, name);
                if (left == 0 || System.nanoTime() > deadline) {
                    return left;
                }
                Thread.sleep(100); // polling for the sessions the server expires
            }
        }
    }

    private static long ephemerals(CuratorFramework c, String path) throws Exception {
        List<String> children;
        try {
            children = c.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
        long n = 0;
        for (String child : children) {
            String p = path + "/" + child;
            Stat s = c.checkExists().forPath(p);
            if (s != null) {
                n += s.getEphemeralOwner() != 0 ? 1 : ephemerals(c, p);
            }
        }
        return n;
    }

    @Override
    public void close() {
        zk.close();
    }
}
