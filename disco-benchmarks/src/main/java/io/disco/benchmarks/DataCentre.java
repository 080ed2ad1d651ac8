package io.disco.benchmarks;

import io.disco.testing.EtcdCluster;
import io.disco.testing.PeerLinks;
import io.disco.testing.TcpProxy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The etcd of {@code ./bench --network dc}: a 3-member cluster with its data on disk (under {@code
 * java.io.tmpdir}, not tmpfs) and fsync on, etcd's default heartbeat and election timeout, and a given
 * round trip on every link: the client reaches each member through a {@link TcpProxy} that holds each
 * chunk back half the round trip each way, and the members reach each other through their {@link
 * PeerLinks}, slowed the same. The kernel here has no {@code netem}, so the delay is the proxies'.
 */
final class DataCentre implements AutoCloseable {

    /** The default round trip between the client and a member (and between members). */
    static final Duration DEFAULT_RTT = Duration.ofNanos(500_000);

    final EtcdCluster cluster;
    /** The proxied client URLs, one per member. */
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
        EtcdCluster cluster = EtcdCluster.startOnDisk(3, Path.of(System.getProperty("java.io.tmpdir"), "disco-bench-dc"));
        List<TcpProxy> proxies = new ArrayList<>();
        List<String> endpoints = new ArrayList<>();
        try {
            cluster.peerLinks().orElseThrow().degradeAll(half);
            for (String endpoint : cluster.endpoints()) {
                URI u = URI.create(endpoint);
                TcpProxy p = new TcpProxy(new InetSocketAddress(u.getHost(), u.getPort()));
                p.degrade(half);
                proxies.add(p);
                endpoints.add("http://127.0.0.1:" + p.port());
            }
        } catch (IOException | RuntimeException e) {
            proxies.forEach(TcpProxy::close);
            cluster.close();
            throw e;
        }
        return new DataCentre(cluster, endpoints, proxies);
    }

    /** @return what the run measures against, for the report */
    static String describe(Duration rtt, EtcdCluster cluster) {
        return String.format(Locale.ROOT, "dc: %.2f ms round trip on every link (client-member and member-member, "
                + "user-space proxies), %s", rtt.toNanos() / 1e6, cluster);
    }

    @Override
    public void close() {
        proxies.forEach(TcpProxy::close);
        cluster.close();
    }
}
