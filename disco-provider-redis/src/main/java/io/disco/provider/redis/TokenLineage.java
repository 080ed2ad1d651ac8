package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * Which lineage of which primary a grant's token comes from: the primary's replication id (Redis changes it on every
 * promotion and every restart) and the epoch of its promotion, agreed outside the data. A grant's script assigns a
 * token only if the primary it runs on still has the replication id read here, and applies the token record's rule
 * with the epoch read here for that replication id (see {@code acquire.lua} and docs/redis.md); a script that finds
 * another replication id answers {@code replid-changed}, and the lineage is read again.
 *
 * <p>The epoch ({@link Epochs}): 0 for a standalone server (only restarts happen there, which the record's generation
 * counts); under Sentinel, the configuration epoch of the failover that made this server the primary, as a majority
 * of the sentinels report it ({@code SENTINEL MASTER}: all of them asked, those naming this server's address as the
 * master counted, the highest {@code config-epoch} among them); in a Cluster, the node's own {@code configEpoch}
 * ({@code CLUSTER NODES}, its {@code myself} line). The pair is read in that order (replication id, then epoch) and
 * cached per node: it stays valid as long as the primary keeps that replication id.
 */
final class TokenLineage implements AutoCloseable {

    /**
     * One primary's lineage.
     *
     * @param replid its replication id when read
     * @param epoch the epoch read for it
     */
    record Line(String replid, long epoch) {}

    /** A lineage that cannot be read now (not a primary, no majority of sentinels): retried within the caller's wait. */
    static final class Unsettled extends Exception {
        private static final long serialVersionUID = 1L;

        Unsettled(String message) {
            super(message);
        }
    }

    /** The flag of a sentinel's master while that sentinel runs or tries a failover of it. */
    static final String FAILOVER_IN_PROGRESS = "failover_in_progress";

    private final Deployment deployment;
    private final Duration timeout;
    private final Map<String, Line> lines = new ConcurrentHashMap<>();
    private final List<StatefulRedisSentinelConnection<String, String>> sentinels = new ArrayList<>();
    private boolean closed;

    TokenLineage(Deployment deployment, Duration timeout) {
        this.deployment = deployment;
        this.timeout = timeout;
    }

    /** @return the cached lineage of {@code node}, or null */
    Line cached(String node) {
        return lines.get(node);
    }

    /** Forgets {@code node}'s lineage: the next grant reads it again. */
    void forget(String node) {
        lines.remove(node);
    }

    /**
     * Reads {@code node}'s lineage: its replication id, then its epoch.
     *
     * @throws Unsettled if the server is not a primary, or its epoch cannot be established now
     * @throws TimeoutException if a server did not answer in time
     */
    Line read(Link.Node node) throws InterruptedException, TimeoutException, Unsettled {
        String where = deployment.describe();
        String info = Calls.await(node.commands().info("replication"), timeout, where, "reading INFO replication");
        if (field(info, "role").filter("master"::equals).isEmpty()) {
            throw new Unsettled(
                    "the server is not a primary (role:" + field(info, "role").orElse("?") + ")");
        }
        String replid = field(info, "master_replid")
                .orElseThrow(() -> new DiscoException(where + " reports no master_replid in INFO replication"));
        long epoch = switch (deployment.kind()) {
            case STANDALONE -> 0;
            case CLUSTER -> clusterEpoch(node, where);
            case SENTINEL -> sentinelEpoch(node, where);
        };
        Line line = new Line(replid, epoch);
        lines.put(node.id(), line);
        return line;
    }

    private long clusterEpoch(Link.Node node, String where) throws InterruptedException, TimeoutException, Unsettled {
        String nodes = Calls.await(node.commands().clusterNodes(), timeout, where, "reading CLUSTER NODES");
        for (String line : nodes.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length > 6 && f[2].contains("myself")) {
                if (!f[2].contains("master")) {
                    throw new Unsettled("the node is not a primary (" + f[2] + ")");
                }
                return Long.parseLong(f[6]);
            }
        }
        throw new DiscoException(where + ": CLUSTER NODES has no 'myself' line");
    }

    /**
     * The configuration epoch of this server's promotion: every sentinel is asked for the master; a majority of all
     * of them must name this server's address (as the server sees its own end of the connection), a sentinel whose
     * master is flagged {@value #FAILOVER_IN_PROGRESS} naming none; the highest {@code config-epoch} among those.
     */
    private long sentinelEpoch(Link.Node node, String where) throws InterruptedException, TimeoutException, Unsettled {
        String clientInfo = Calls.await(node.commands().clientInfo(), timeout, where, "reading CLIENT INFO");
        String self = null;
        for (String kv : clientInfo.trim().split(" ")) {
            if (kv.startsWith("laddr=")) {
                self = kv.substring("laddr=".length());
            }
        }
        if (self == null) {
            throw new DiscoException(where + ": CLIENT INFO tells no laddr");
        }
        Deployment.Single single = (Deployment.Single) deployment;
        List<StatefulRedisSentinelConnection<String, String>> all = sentinels(single);
        String master = single.uri.getSentinelMasterId();
        int naming = 0;
        long epoch = -1;
        List<String> seen = new ArrayList<>();
        for (StatefulRedisSentinelConnection<String, String> s : all) {
            try {
                Map<String, String> m = Calls.await(s.async().master(master), timeout, where, "asking a sentinel");
                String addr = m.get("ip") + ":" + m.get("port");
                String flags = String.valueOf(m.get("flags"));
                seen.add(addr + "@" + m.get("config-epoch")
                        + (flags.contains(FAILOVER_IN_PROGRESS) ? " (failing over)" : ""));
                // a failover's leader sets the master's config-epoch to the new epoch when the replica it promoted
                // answers as a master, and keeps the old primary's address until its +switch-master: its answer
                // would bind the old primary (restarted with a new replication id meanwhile) to the promoted one's
                // epoch. A sentinel in a failover names nobody.
                if (self.equals(addr) && !flags.contains(FAILOVER_IN_PROGRESS)) {
                    naming++;
                    epoch = Math.max(epoch, Long.parseLong(m.get("config-epoch")));
                }
            } catch (TimeoutException | RuntimeException e) {
                seen.add("no answer (" + e + ")");
            }
        }
        int total = single.sentinels().size();
        if (naming * 2 <= total) {
            throw new Unsettled("only " + naming + " of " + total + " sentinels name this server (" + self
                    + ") as the master '" + master + "': " + seen);
        }
        return epoch;
    }

    private synchronized List<StatefulRedisSentinelConnection<String, String>> sentinels(Deployment.Single single) {
        if (closed) {
            throw new IllegalStateException("the session is closed");
        }
        if (sentinels.isEmpty()) {
            for (RedisURI s : single.sentinels()) {
                RedisURI direct = RedisURI.builder(s).build();
                direct.setTimeout(timeout);
                try {
                    sentinels.add(Deployment.await(
                            single.client.connectSentinelAsync(StringCodec.UTF8, direct),
                            timeout,
                            "the sentinel at " + s.getHost() + ":" + s.getPort()));
                } catch (DiscoException e) {
                    // counted as not naming this server
                }
            }
        }
        return List.copyOf(sentinels);
    }

    /** Closes the sentinel connections and waits for them ({@link ConnectionClose}), outside the monitor. */
    @Override
    public void close() {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (StatefulRedisSentinelConnection<String, String> s : sentinels) {
                closing.add(s.closeAsync());
            }
            sentinels.clear();
        }
        ConnectionClose.await(closing);
    }

    /** @return the value of {@code name} in an INFO section */
    static java.util.Optional<String> field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return java.util.Optional.of(line.substring(name.length() + 1).trim());
            }
        }
        return java.util.Optional.empty();
    }
}
