package io.disco.chaos;

import io.disco.client.Disco;
import io.disco.client.DiscoBackend;
import io.disco.election.LeadershipRunner;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.etcd.EtcdSession;
import io.disco.provider.etcd.EtcdSessionOwner;
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
 * Both bound every request by the same request timeout, shorter than the TTL (checked here), which a freeze of
 * every member can outlast ({@link Nemesis#FREEZE_ALL}).
 */
interface OwnerBackend {

    /** The prefix of a ZooKeeper connect string in an owner's arguments. */
    String ZOOKEEPER = "zookeeper:";

    /** @return a new session; throws while the backend cannot be reached */
    DiscoBackend.Owner open();

    LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options);

    /**
     * @return a new client ({@code io.disco.client.Disco}) on this backend, with the sessions' options: for etcd
     *     {@code EtcdProvider.healingDisco}, for ZooKeeper {@code Disco.healing} over the same
     *     {@code ZooKeeperDiscoBackend}; healing, so that an owner started while the members do not answer waits for
     *     them instead of dying
     */
    Disco disco();

    /**
     * @param ttl the lease TTL (etcd) or session timeout (ZooKeeper)
     * @param requestTimeout how long one request may wait for its answer; shorter than {@code ttl}
     */
    static OwnerBackend of(String endpoints, Duration ttl, Duration requestTimeout) {
        if (requestTimeout.compareTo(ttl) >= 0) {
            throw new IllegalArgumentException(
                    "the request timeout (" + requestTimeout + ") must be shorter than the TTL (" + ttl + ")");
        }
        return endpoints.startsWith(ZOOKEEPER)
                ? zookeeper(endpoints.substring(ZOOKEEPER.length()), ttl, requestTimeout)
                : etcd(endpoints, ttl, requestTimeout);
    }

    /**
     * Every request bounded by the request timeout, as the etcd owners' are; connecting by 2 s. The ensemble tracker is off: it would swap
     * the owner's proxies for the members' own client addresses (from {@code /zookeeper/config}), and a
     * partitioned owner would reconnect around its cut proxies.
     */
    private static OwnerBackend zookeeper(String connectString, Duration ttl, Duration requestTimeout) {
        ZooKeeperDiscoBackend backend = ZooKeeperDiscoBackend.over(
                CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .ensembleTracker(false)
                        .sessionTimeoutMs((int) ttl.toMillis())
                        .connectionTimeoutMs(2_000)
                        .retryPolicy(new RetryNTimes(3, 100)),
                ZooKeeperOptions.builder()
                        .connectTimeout(Duration.ofSeconds(2))
                        .requestTimeout(requestTimeout)
                        .build());
        return new OwnerBackend() {
            @Override
            public DiscoBackend.Owner open() {
                return backend.open();
            }

            @Override
            public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options options) {
                return backend.newLeadershipRunner(name, options);
            }

            @Override
            public Disco disco() {
                return Disco.healing(backend);
            }
        };
    }

    private static OwnerBackend etcd(String endpoints, Duration ttl, Duration requestTimeout) {
        Client client = Client.builder()
                .endpoints(endpoints.split(","))
                .interceptor(EtcdDeadlines.unary(requestTimeout))
                .build();
        EtcdOptions options =
                EtcdOptions.builder().ttl(ttl).requestTimeout(requestTimeout).build();
        return new OwnerBackend() {
            @Override
            public DiscoBackend.Owner open() {
                return new EtcdSessionOwner(EtcdSession.open(client, options));
            }

            @Override
            public LeadershipRunner newLeadershipRunner(String name, LeadershipRunner.Options runner) {
                return EtcdProvider.newLeadershipRunner(client, name, runner, options);
            }

            @Override
            public Disco disco() {
                return EtcdProvider.healingDisco(client, options);
            }
        };
    }
}
