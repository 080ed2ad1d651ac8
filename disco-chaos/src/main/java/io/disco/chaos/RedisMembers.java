package io.disco.chaos;

import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import io.disco.testservers.RedisAddress;
import io.disco.testservers.RedisSentinelSet;
import io.disco.testservers.RedisServer;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A chaos run's Redis: a {@link RedisSentinelSet} (a primary, two replicas, three sentinels with
 * {@code down-after-milliseconds 1000}, {@code failover-timeout 3000}), every process on loopback, or, networked
 * ({@link RedisSentinelSet#startNetworked()}), each data server with a sentinel beside it in a network namespace of its
 * own. The members are the three data servers, in start order: {@link #leader()} is the one a majority of the
 * sentinels names as the primary; kill, restart, freeze and resume act on them; the sentinels are never faulted
 * themselves, but a member partition cuts off the sentinel beside the data server too.
 *
 * <p>The owners reach every server through TCP proxies of their own ({@link #clientAddresses()}: the data servers,
 * then the sentinels): their Lettuce client is given the sentinels' proxies and maps every data server's address the
 * sentinels name to that server's proxy ({@link OwnerBackend}), so {@code partition-owner} and the link faults cut or
 * slow both an owner's sentinel queries and its connections to the primary. Networked, the member partitions of
 * {@link NetworkFaults} are dealt too ({@link #network()}): {@code isolate-leader} cuts the primary and its sentinel
 * off from the two other members while the owners' proxies, in the root namespace, still reach it (the split where the
 * old primary keeps serving the clients attached to it while the other two sentinels promote a replica: its grants'
 * {@code WAIT 1} then finds no replica, and they fail closed); the peer-link kinds are not (no peer ports behind
 * proxies).
 *
 * <p>A watcher asks the sentinels every 100 ms for the master's {@code config-epoch}; each rise is a promotion, kept
 * as an observed fault of type {@value #FAILOVER} at the moment it was first seen ({@link #observed()}): the
 * {@link OverlappingHolds} checker reports the overlaps across one in their own row.
 */
final class RedisMembers implements Members {

    /** The type of the observed promotions ({@link #observed()}). */
    static final String FAILOVER = "failover";

    private final RedisSentinelSet redis;
    private final List<RedisServer> servers;
    private final List<RedisServer> sentinels;
    private final List<Observations.Fault> failovers = new CopyOnWriteArrayList<>();
    private final Thread watcher;
    private volatile boolean closed;

    /** @param networked each data server and a sentinel in a network namespace of their own (needs root) */
    RedisMembers(boolean networked) {
        this.redis = networked ? RedisSentinelSet.startNetworked() : RedisSentinelSet.start();
        this.servers = redis.servers();
        this.sentinels = redis.sentinelServers();
        this.watcher = new Thread(this::watch, "chaos-redis-failovers");
        watcher.setDaemon(true);
        watcher.start();
    }

    /** @return the deployment, for tests */
    RedisSentinelSet deployment() {
        return redis;
    }

    @Override
    public String backend() {
        return "redis";
    }

    /** @return {@code Redis 7.0.15}: a primary, two replicas and three sentinels of it */
    @Override
    public String server() {
        String info = String.valueOf(servers.get(0).command("INFO", "server"));
        String version = info.lines()
                .filter(l -> l.startsWith("redis_version:"))
                .map(l -> l.substring("redis_version:".length()).trim())
                .findFirst()
                .orElse("?");
        return "Redis " + version;
    }

    @Override
    public int size() {
        return servers.size();
    }

    /** @return the data servers' addresses, then the sentinels' (sentinel {@code i} beside data server {@code i}) */
    @Override
    public List<InetSocketAddress> clientAddresses() {
        List<InetSocketAddress> list = new ArrayList<>();
        for (RedisServer s : servers) {
            list.add(new InetSocketAddress(s.host(), s.port()));
        }
        for (RedisServer s : sentinels) {
            list.add(new InetSocketAddress(s.host(), s.port()));
        }
        return list;
    }

    /**
     * @param ports the owner's proxies, in the order of {@link #clientAddresses()}
     * @return {@code redis:<sentinel proxies>#<master>;<data server>=<its proxy's port>,...} ({@link OwnerBackend})
     */
    @Override
    public String ownerEndpoints(List<Integer> ports) {
        List<String> sentinelProxies = new ArrayList<>();
        for (int i = 0; i < sentinels.size(); i++) {
            sentinelProxies.add("127.0.0.1:" + ports.get(servers.size() + i));
        }
        List<String> map = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            map.add(servers.get(i).address() + "=" + ports.get(i));
        }
        return OwnerBackend.REDIS + String.join(",", sentinelProxies) + "#" + redis.masterName() + ";"
                + String.join(",", map);
    }

    /** @return {@code --redis} and the sentinels' URI: the resource's bound reads them directly ({@link RedisTokenBound}) */
    @Override
    public List<String> resourceArguments() {
        return List.of("--redis", redis.sentinelUri());
    }

    @Override
    public void kill(int member) {
        servers.get(member).kill();
    }

    @Override
    public void startMember(int member) {
        servers.get(member).restart();
    }

    @Override
    public void pause(int member) {
        servers.get(member).freeze();
    }

    @Override
    public void resume(int member) {
        servers.get(member).resume();
    }

    /** Blocks data server {@code member} for {@code millis} ({@code DEBUG SLEEP}); the call's own timeout is ignored. */
    void sleep(int member, long millis) {
        try {
            servers.get(member).command("DEBUG", "SLEEP", Double.toString(millis / 1000.0));
        } catch (RuntimeException e) {
            // the server still sleeps when the reply is waited for shorter than the sleep (5 s)
        }
    }

    /** @return the data server a majority of the sentinels names as the primary, or -1 */
    @Override
    public int leader() {
        try {
            return servers.indexOf(redis.primary());
        } catch (IllegalStateException e) {
            return -1;
        }
    }

    /**
     * Waits until a majority of the sentinels names a data server other than {@code old} as the primary and it says
     * {@code role:master}.
     *
     * @return whether that happened within {@code timeoutNanos}
     */
    boolean awaitPromotionOtherThan(int old, long timeoutNanos) {
        try {
            redis.awaitFailover(servers.get(old), java.time.Duration.ofNanos(timeoutNanos));
            return true;
        } catch (IllegalStateException e) {
            System.err.println("[chaos] " + e.getMessage());
            return false;
        }
    }

    /**
     * Heals the member network, if any; then waits until every data server runs, a majority of the sentinels names one as the primary, which says {@code role:master}
     * with both replicas {@code online}; every replica says {@code master_link_status:up}.
     */
    @Override
    public Optional<String> awaitRecovered(long timeoutNanos) throws InterruptedException {
        network().ifPresent(MemberNetwork::healAll);
        long deadline = System.nanoTime() + timeoutNanos;
        String last;
        while (true) {
            last = health();
            if (last == null) {
                return Optional.empty();
            }
            if (System.nanoTime() - deadline > 0) {
                return Optional.of(last);
            }
            Thread.sleep(100); // polling the servers' roles
        }
    }

    /** @return null when healthy, else what is not */
    private String health() {
        for (RedisServer s : servers) {
            if (!s.isRunning()) {
                s.restart(); // healing a member a failed fault left down
                return s.address() + " was not running";
            }
        }
        int leader = leader();
        if (leader < 0) {
            return "no majority of the sentinels names a primary";
        }
        try {
            String primary = String.valueOf(servers.get(leader).command("INFO", "replication"));
            if (!primary.contains("role:master")
                    || primary.lines().filter(l -> l.contains("state=online")).count() != servers.size() - 1) {
                return "the primary m" + leader + " is not a master with every replica online: "
                        + primary.replace("\r\n", " ");
            }
            for (int i = 0; i < servers.size(); i++) {
                if (i != leader) {
                    String info = String.valueOf(servers.get(i).command("INFO", "replication"));
                    if (!info.contains("master_link_status:up")) {
                        return "m" + i + " has no link to the primary: " + info.replace("\r\n", " ");
                    }
                }
            }
        } catch (RuntimeException e) {
            return "a server did not answer: " + e.getMessage();
        }
        return null;
    }

    /**
     * Watches the sentinels' {@code config-epoch} of the master: a rise is a promotion, recorded once, when the first
     * sentinel reports it (the leader of the failover, as soon as it sees the replica it promoted answer as a master),
     * its target the server a sentinel not in a failover names with it, else {@code ?}.
     */
    private void watch() {
        long seen = -1;
        while (!closed) {
            long max = -1;
            String named = null;
            for (RedisServer s : sentinels) {
                try {
                    List<?> reply = (List<?>) s.command("SENTINEL", "MASTER", redis.masterName());
                    Map<String, String> f = new HashMap<>();
                    for (int i = 0; i + 1 < reply.size(); i += 2) {
                        f.put(String.valueOf(reply.get(i)), String.valueOf(reply.get(i + 1)));
                    }
                    long epoch = Long.parseLong(f.get("config-epoch"));
                    String address = f.get("ip") + ":" + f.get("port");
                    if (epoch > max) {
                        max = epoch;
                        named = null;
                    }
                    if (epoch == max && !f.get("flags").contains("failover_in_progress")) {
                        named = address;
                    }
                } catch (RuntimeException e) {
                    // a sentinel that does not answer tells nothing
                }
            }
            if (seen >= 0 && max > seen) {
                long now = System.nanoTime();
                String target = "?";
                for (int i = 0; i < servers.size(); i++) {
                    if (servers.get(i).address().toString().equals(named)) {
                        target = "m" + i;
                    }
                }
                failovers.add(new Observations.Fault(FAILOVER, target, now, now, max));
                System.err.println("[chaos] failover: config epoch " + max + ", primary " + target);
            }
            seen = Math.max(seen, max);
            try {
                Thread.sleep(100); // sentinels announce promotions on a channel, but a poll is enough for a record
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public List<Observations.Fault> observed() {
        return List.copyOf(failovers);
    }

    /** @return the member a client address is in: data server {@code i} and sentinel {@code i} are member {@code i} */
    @Override
    public int memberOf(int clientAddress) {
        return clientAddress % servers.size();
    }

    @Override
    public Optional<MemberNetwork> network() {
        return redis.network();
    }

    @Override
    public Optional<PeerLinks> peerLinks() {
        return Optional.empty();
    }

    /**
     * Every kind but {@code compact} and the peer-link kinds; the member partitions when networked; the
     * {@link RedisFaults}.
     */
    @Override
    public boolean deals(String kind) {
        if (kind.equals("compact") || Nemesis.PEER_KINDS.contains(kind)) {
            return false;
        }
        return !Nemesis.NET_KINDS.contains(kind) || network().isPresent();
    }

    @Override
    public boolean hasHistory() {
        return false;
    }

    @Override
    public void compact() {
        throw new UnsupportedOperationException("Redis has no history to compact");
    }

    /**
     * The claim keys under {@code name} on the primary ({@code disco:{<name>}:c:*}): a claim its owner did not give up
     * expires on the server after the TTL.
     */
    @Override
    public long keysLeft(String name, long ttlNanos) throws Exception {
        long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
        while (true) {
            long left = -1;
            int leader = leader();
            if (leader >= 0) {
                try {
                    left = ((List<?>) servers.get(leader).command("KEYS", "disco:{" + name + "}:c:*")).size();
                } catch (RuntimeException e) {
                    left = -1;
                }
            }
            if (left == 0 || System.nanoTime() > deadline) {
                return left < 0 ? 1 : left; // unknown (no primary named) counts as a key left
            }
            Thread.sleep(100); // polling for the claims the server expires
        }
    }

    @Override
    public void close() {
        closed = true;
        watcher.interrupt();
        redis.close();
    }

    /** @return the address of data server {@code member} */
    RedisAddress address(int member) {
        return servers.get(member).address();
    }
}
