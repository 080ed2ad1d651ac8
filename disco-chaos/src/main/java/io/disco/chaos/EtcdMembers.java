package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
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

    /** @return {@code etcd 3.5.16 at /path/etcd}, from the cluster's description */
    @Override
    public String server() {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(etcd \\S+) \\(([^)]*)\\)").matcher(etcd.describe());
        return m.find() ? m.group(1) + " at " + m.group(2) : etcd.describe();
    }

    /**
     * The report's label of a server: etcd releases before 3.4.31 and 3.5.0 to 3.5.12 have the lease bug of etcd
     * issues 15247 and 12528 (an old leader, frozen and resumed, revokes leases that the new leader renewed, so an
     * owner loses its keys while its renewals succeed: a server bug that a fault run would blame on the library), and
     * say so; {@code ./chaos} runs on etcd 3.5 from Debian trixie unless told otherwise ({@code --etcd system}).
     *
     * @param server {@link #server()}'s answer (or ZooKeeper's)
     * @return the server, with the bug named where its version has it
     */
    static String label(String server) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^etcd (\\d+)\\.(\\d+)\\.(\\d+)")
                .matcher(server);
        if (!m.find()) {
            return server;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int patch = Integer.parseInt(m.group(3));
        boolean leaseBug =
                major < 3 || major == 3 && (minor < 4 || minor == 4 && patch < 31 || minor == 5 && patch < 13);
        return server
                + (leaseBug
                        ? " (HAS the lease bug of etcd issues 15247/12528, fixed in 3.4.31 and 3.5.13: an old"
                                + " leader frozen and resumed revokes leases the new leader renewed)"
                        : " (without the lease bug of etcd issues" + " 15247/12528)");
    }

    @Override
    public int size() {
        return etcd.size();
    }

    @Override
    public List<InetSocketAddress> clientAddresses() {
        return etcd.endpoints().stream()
                .map(URI::create)
                .map(u -> new InetSocketAddress(u.getHost(), u.getPort()))
                .toList();
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
        try (Client c = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
            while (true) {
                long left = c.getKVClient()
                        .get(
                                ByteSequence.from(name + "/", UTF_8),
                                GetOption.builder()
                                        .isPrefix(true)
                                        .withCountOnly(true)
                                        .build())
                        .get(10, TimeUnit.SECONDS)
                        .getCount();
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
