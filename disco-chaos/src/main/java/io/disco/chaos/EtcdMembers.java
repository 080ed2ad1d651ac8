package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testing.EtcdCluster;
import io.disco.testing.MemberNetwork;
import io.disco.testing.PeerLinks;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A chaos run's etcd: a 3-member {@link EtcdCluster} on loopback, or each member in a network namespace with
 * its peer port behind a proxy ({@link EtcdCluster#startNetworked}); what the nemesis asks it is {@link ClusterProbe}'s.
 */
final class EtcdMembers implements Members {

    private final EtcdCluster etcd;

    EtcdMembers(boolean networked) {
        this.etcd = networked ? EtcdCluster.startNetworked(3) : EtcdCluster.start(3);
    }

    @Override
    public String backend() {
        return "etcd";
    }

    @Override
    public int size() {
        return etcd.size();
    }

    @Override
    public List<InetSocketAddress> clientAddresses() {
        return etcd.endpoints().stream().map(URI::create).map(u -> new InetSocketAddress(u.getHost(), u.getPort())).toList();
    }

    @Override
    public String ownerEndpoints(List<Integer> ports) {
        return String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList());
    }

    @Override
    public List<String> resourceArguments() {
        return List.of("--etcd", String.join(",", etcd.endpoints()));
    }

    @Override
    public void kill(int member) {
        etcd.kill(member);
    }

    @Override
    public void startMember(int member) {
        etcd.startMember(member);
    }

    @Override
    public void pause(int member) {
        etcd.pause(member);
    }

    @Override
    public void resume(int member) {
        etcd.resume(member);
    }

    @Override
    public Optional<MemberNetwork> network() {
        return etcd.network();
    }

    @Override
    public Optional<PeerLinks> peerLinks() {
        return etcd.peerLinks();
    }

    /** Heals the member network and the peer links, then waits ({@link ClusterProbe#awaitRecovered}). */
    @Override
    public Optional<String> awaitRecovered(long timeoutNanos) throws InterruptedException {
        return ClusterProbe.awaitRecovered(etcd, timeoutNanos);
    }

    @Override
    public int leader() {
        return ClusterProbe.leader(etcd);
    }

    @Override
    public boolean hasHistory() {
        return true;
    }

    @Override
    public void compact() throws Exception {
        ClusterProbe.compact(etcd);
    }

    /** Holder keys under the name: an owner whose revoke found no member leaves keys until its lease runs out. */
    @Override
    public long keysLeft(String name, long ttlNanos) throws Exception {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
            while (true) {
                long left = c.getKVClient().get(ByteSequence.from(name + "/", UTF_8),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build()).get(10, TimeUnit.SECONDS).getCount();
                if (left == 0 || System.nanoTime() > deadline) {
                    return left;
                }
                Thread.sleep(100); // polling etcd for the leases that run out
            }
        }
    }

    @Override
    public void close() {
        etcd.close();
    }
}
