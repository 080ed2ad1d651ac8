package io.disco.chaos;

import io.disco.client.DiscoBackend;
import io.disco.election.LeadershipRunner;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSessionOwner;
import io.disco.provider.etcd.EtcdSession;
import io.disco.provider.zookeeper.ZooKeeperDiscoBackend;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.etcd.jetcd.Client;
import java.time.Duration;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * What an {@link Owner} process runs its sessions on: etcd (an {@link EtcdSession} per session, on one jetcd
 * client) or ZooKeeper (a Curator client and its ZooKeeper session per session, the session timeout the TTL).
 * Chosen by the endpoints argument: {@value #ZOOKEEPER}{@code <host:port,...>} for ZooKeeper, etcd URLs else.
 */
interface OwnerBackend {

    /** The prefix of a ZooKeeper connect string in an owner's arguments. */
    String ZOOKEEPER = "zookeeper:";

    /** @return a new session; throws while the backend cannot be reached */
    DiscoBackend.Owner open();

    LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options);

    static OwnerBackend of(String endpoints, Duration ttl) {
        return endpoints.startsWith(ZOOKEEPER) ? zookeeper(endpoints.substring(ZOOKEEPER.length()), ttl) : etcd(endpoints, ttl);
    }

    /**
     * Every blocking call bounded by 2 s, as the etcd owners' are. The ensemble tracker is off: it would swap
     * the owner's proxies for the members' own client addresses (from {@code /zookeeper/config}), and a
     * partitioned owner would reconnect around its cut proxies.
     */
    private static OwnerBackend zookeeper(String connectString, Duration ttl) {
        ZooKeeperDiscoBackend backend = ZooKeeperDiscoBackend.over(CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .ensembleTracker(false)
                .sessionTimeoutMs((int) ttl.toMillis())
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(3, 100)),
                ZooKeeperOptions.builder().connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(2)).build());
        return new OwnerBackend() {
            @Override
            public DiscoBackend.Owner open() {
                return backend.open();
            }

            @Override
            public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options) {
                return backend.newLeadershipRunner(name, options);
            }
        };
    }

    private static OwnerBackend etcd(String endpoints, Duration ttl) {
        Client client = Client.builder().endpoints(endpoints.split(","))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(2))).build();
        EtcdOptions options = EtcdOptions.builder().ttl(ttl).requestTimeout(Duration.ofSeconds(2)).build();
        return new OwnerBackend() {
            @Override
            public DiscoBackend.Owner open() {
                return new EtcdSessionOwner(EtcdSession.open(client, options));
            }

            @Override
            public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options runner) {
                return EtcdProvider.newLeadershipRunner(client, name, runner, options);
            }
        };
    }

}
