package io.disco.benchmarks;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.PeerLinks;
import io.disco.testservers.TcpProxy;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The etcd of {@code ./bench --network dc}: a 3-member cluster with its data on disk (under {@code
 * java.io.tmpdir}, not tmpfs) and fsync on, etcd's default heartbeat and election timeout, and a given
 * round trip on every link: the client reaches the leader through a {@link TcpProxy} that holds each
 * chunk back half the round trip each way, and the members reach each other through their {@link
 * PeerLinks}, slowed the same. The kernel here has no {@code netem}, so the delay is the proxies'.
 *
 * <p>The client talks to the leader only: jetcd sends each call to the next endpoint in turn, and a
 * call that a follower answers waits for a forwarding round trip and the follower's apply besides; with
 * every member listed, the floor, disco's Txns sent raw and jetcd's Lock (the same two writes each)
 * came out 51, 40 and 24 ms in one run, against the leader alone 17, 16 and 16 ms.
 */
final class DataCentre implements AutoCloseable {

    /** The default round trip between the client and a member (and between members). */
    static final Duration DEFAULT_RTT = Duration.ofNanos(500_000);

    final EtcdCluster cluster;
    /** The proxied client URL of the leader. */
    final List<String> endpoints;

    private final List<TcpProxy> proxies;

    private DataCentre(EtcdCluster cluster, List<String> endpoints, List<TcpProxy> proxies) {
        this.cluster = cluster;
        this.endpoints = List.copyOf(endpoints);
        this.proxies = proxies;
    }

    /**
     * Starts the cluster and the client proxies, every link delayed {@code rtt / 2} each way.
     *
     * @throws IOException if a proxy cannot listen
     */
    static DataCentre start(Duration rtt) throws IOException {
        TcpProxy.Link half = new TcpProxy.Link(rtt.dividedBy(2), Duration.ZERO, 0);
        EtcdCluster cluster =
                EtcdCluster.startOnDisk(3, Path.of(System.getProperty("java.io.tmpdir"), "disco-bench-dc"));
        List<TcpProxy> proxies = new ArrayList<>();
        List<String> endpoints = new ArrayList<>();
        try {
            cluster.peerLinks().orElseThrow().degradeAll(half);
            URI u = URI.create(cluster.endpoint(leader(cluster)));
            TcpProxy p = new TcpProxy(new InetSocketAddress(u.getHost(), u.getPort()));
            p.degrade(half);
            proxies.add(p);
            endpoints.add("http://127.0.0.1:" + p.port());
        } catch (IOException | RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            cluster.close();
            throw e;
        }
        return new DataCentre(cluster, endpoints, proxies);
    }

    /** @return the index of the member that says it leads, asked directly (not through a proxy) */
    private static int leader(EtcdCluster cluster) {
        try (Client c = Client.builder()
                .endpoints(cluster.endpoints().toArray(String[]::new))
                .build()) {
            for (int i = 0; i < cluster.size(); i++) {
                StatusResponse s = c.getMaintenanceClient()
                        .statusMember(cluster.endpoint(i))
                        .get(10, TimeUnit.SECONDS);
                if (s.getLeader() == s.getHeader().getMemberId()) {
                    return i;
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot find the leader of " + cluster, e);
        }
        throw new IllegalStateException("no member of " + cluster + " says it leads");
    }

    /** @return what the run measures against, for the report */
    static String describe(Duration rtt, EtcdCluster cluster) {
        return String.format(
                Locale.ROOT,
                "dc: %.2f ms round trip on every link (client-leader and member-member, " + "user-space proxies), %s",
                rtt.toNanos() / 1e6,
                cluster);
    }

    @Override
    public void close() {
        proxies.forEach(TcpProxy::close);
        cluster.close();
    }
}
