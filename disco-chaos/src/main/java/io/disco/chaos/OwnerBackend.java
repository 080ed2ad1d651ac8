package io.disco.chaos;

import io.disco.client.TestableBackend;
import io.disco.provider.etcd.EtcdDeadlines;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdProvider;
import io.disco.provider.redis.RedisDiscoBackend;
import io.disco.provider.redis.RedisOptions;
import io.disco.provider.zookeeper.ZooKeeperDiscoBackend;
import io.disco.provider.zookeeper.ZooKeeperOptions;
import io.etcd.jetcd.Client;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import java.time.Duration;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * What an {@link Owner} process runs its sessions on: the client SPI's backend with its test hooks
 * ({@link TestableBackend}), on etcd (an {@code EtcdSession} per session, on one jetcd client:
 * {@link EtcdProvider#testableBackend}) or ZooKeeper (a Curator client and its ZooKeeper session per session, the
 * session timeout the TTL: {@link ZooKeeperDiscoBackend}) or a Sentinel-managed Redis (a {@code RedisSession} per
 * session on one Lettuce client: {@link RedisDiscoBackend}). Its client ({@code io.disco.client.Disco}) is
 * {@code Disco.healing(backend)}: an owner started while the members do not answer waits for them instead of dying.
 * Chosen by the endpoints argument: {@value #ZOOKEEPER}{@code <host:port,...>} for ZooKeeper, {@value #REDIS} for
 * Redis, etcd URLs else. Both
 * bound every request by the same request timeout, shorter than the TTL (checked here), which a freeze of every member
 * can outlast ({@link Nemesis#FREEZE_ALL}).
 */
final class OwnerBackend {

    /** The prefix of a ZooKeeper connect string in an owner's arguments. */
    static final String ZOOKEEPER = "zookeeper:";
    /**
     * The prefix of a Sentinel-managed Redis in an owner's arguments: {@code redis:<sentinels>#<master>;<map>}, the
     * sentinels {@code host:port} comma-separated (the owner's proxies), the map {@code host:port=port} for each data
     * server (its address as the sentinels name it, and the port of the owner's proxy in front of it).
     */
    static final String REDIS = "redis:";

    private OwnerBackend() {}

    /**
     * @param endpoints etcd URLs, comma-separated, or {@value #ZOOKEEPER} and a ZooKeeper connect string
     * @param ttl the lease TTL (etcd) or session timeout (ZooKeeper) of the owners {@code open()} opens
     * @param requestTimeout how long one request may wait for its answer; shorter than {@code ttl}
     * @return the backend, for the life of the process (it is never closed)
     */
    static TestableBackend of(String endpoints, Duration ttl, Duration requestTimeout) {
        if (requestTimeout.compareTo(ttl) >= 0) {
            throw new IllegalArgumentException(
                    "the request timeout (" + requestTimeout + ") must be shorter than the TTL (" + ttl + ")");
        }
        if (endpoints.startsWith(REDIS)) {
            return redis(endpoints.substring(REDIS.length()), ttl, requestTimeout);
        }
        return endpoints.startsWith(ZOOKEEPER)
                ? zookeeper(endpoints.substring(ZOOKEEPER.length()), ttl, requestTimeout)
                : etcd(endpoints, ttl, requestTimeout);
    }

    /**
     * Every request bounded by the request timeout, as the etcd owners' are; connecting by 2 s. The ensemble tracker
     * is off: it would swap the owner's proxies for the members' own client addresses (from
     * {@code /zookeeper/config}), and a partitioned owner would reconnect around its cut proxies.
     */
    private static TestableBackend zookeeper(String connectString, Duration ttl, Duration requestTimeout) {
        return ZooKeeperDiscoBackend.over(
                sessionTimeout -> CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .ensembleTracker(false)
                        .sessionTimeoutMs((int) sessionTimeout.toMillis())
                        .connectionTimeoutMs(2_000)
                        .retryPolicy(new RetryNTimes(3, 100)),
                ttl,
                ZooKeeperOptions.builder()
                        .connectTimeout(Duration.ofSeconds(2))
                        .requestTimeout(requestTimeout)
                        .build());
    }

    /**
     * A Lettuce client on the sentinels' proxies whose socket addresses are mapped ({@link MappingSocketAddressResolver}):
     * every data server the sentinels name is reached through the owner's proxy in front of it. The sessions' options
     * are the provider's under Sentinel ({@code WAIT 1} after each grant, within a third of the TTL), the request
     * timeout the owners' and connecting within 2 s.
     */
    private static TestableBackend redis(String spec, Duration ttl, Duration requestTimeout) {
        String[] parts = spec.split(";", 2);
        java.util.Map<HostAndPort, HostAndPort> proxies = new java.util.HashMap<>();
        for (String entry : parts[1].split(",")) {
            String[] kv = entry.split("=");
            HostAndPort server = HostAndPort.parse(kv[0]);
            // the owner's proxies listen on loopback, whatever address the server has (a namespace's, networked)
            proxies.put(server, HostAndPort.of("127.0.0.1", Integer.parseInt(kv[1])));
        }
        ClientResources resources = ClientResources.builder()
                .socketAddressResolver(MappingSocketAddressResolver.create(
                        DnsResolvers.JVM_DEFAULT, hp -> proxies.getOrDefault(hp, hp)))
                .build();
        RedisClient client = RedisClient.create(resources);
        RedisURI uri = RedisURI.create("redis-sentinel://" + parts[0]);
        uri.setTimeout(requestTimeout);
        RedisOptions.Builder options =
                RedisOptions.builder().ttl(ttl).requestTimeout(requestTimeout).connectTimeout(Duration.ofSeconds(2));
        String acks = System.getenv("DISCO_CHAOS_REDIS_ACKS");
        if (acks != null) {
            options.replicaAcks(Integer.parseInt(acks));
        }
        return RedisDiscoBackend.over(client, uri, options.build());
    }

    private static TestableBackend etcd(String endpoints, Duration ttl, Duration requestTimeout) {
        Client client = Client.builder()
                .endpoints(endpoints.split(","))
                .interceptor(EtcdDeadlines.unary(requestTimeout))
                .build();
        return EtcdProvider.testableBackend(
                client,
                EtcdOptions.builder().ttl(ttl).requestTimeout(requestTimeout).build());
    }
}
