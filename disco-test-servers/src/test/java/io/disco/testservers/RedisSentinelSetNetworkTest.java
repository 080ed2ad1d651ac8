package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel-managed Redis with each data server and a sentinel beside it in a network namespace of their own: the
 * primary cut off from the other two members, while this process still reaches it through the bridge, is replaced by a
 * replica the two other sentinels promote, and keeps taking writes from the clients that reach it (the stale primary,
 * which gets no replica's acknowledgement: {@code WAIT 1} answers 0); healed, it is demoted and replicates the new
 * primary. Closing the deployment removes the namespaces. Needs root, iproute2 and nftables.
 */
class RedisSentinelSetNetworkTest {

    @Test
    void anIsolatedPrimaryIsReplacedKeepsServingItsClientsAndIsDemotedWhenHealed() {
        List<String> names;
        try (RedisSentinelSet redis = RedisSentinelSet.startNetworked()) {
            MemberNetwork net = redis.network().orElseThrow();
            names = List.of(net.namespace(0), net.namespace(1), net.namespace(2));
            List<RedisServer> servers = redis.servers();
            for (int i = 0; i < 3; i++) {
                assertEquals(net.address(i), servers.get(i).host());
                assertEquals(RedisSentinelSet.NETWORKED_PORT, servers.get(i).port());
                assertEquals(net.address(i), redis.sentinels().get(i).host());
            }
            assertTrue(redis.sentinelUri().contains(net.address(2) + ":" + RedisSentinelSet.NETWORKED_SENTINEL_PORT));
            RedisServer old = redis.primary();
            assertSame(servers.get(0), old);
            // the replicas are known by their namespace addresses (replica-announce-ip)
            String replication = (String) old.command("INFO", "replication");
            assertTrue(replication.contains("ip=" + net.address(1)), replication);
            assertTrue(replication.contains("ip=" + net.address(2)), replication);

            net.cut(0, List.of(1, 2));
            net.cut(1, List.of(0));
            net.cut(2, List.of(0));
            RedisServer promoted = redis.awaitFailover(old, Duration.ofSeconds(20));
            assertNotSame(old, promoted);
            // the stale primary: still a master to the clients that reach it, taking writes no replica acknowledges
            assertEquals("master", old.role());
            assertEquals(0L, writeAndWait(old, "stale"));
            assertTrue((Long) writeAndWait(promoted, "fresh") >= 1L, "the new primary's replica acknowledged");

            net.healAll();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!("slave".equals(old.role())
                    && String.valueOf(old.command("INFO", "replication")).contains("master_link_status:up"))) {
                assertTrue(System.nanoTime() < deadline, "the old primary was not demoted: " + old.command("ROLE"));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // polling its role
            }
            assertSame(promoted, redis.primary());
            assertEquals("1", old.command("GET", "fresh"));
            assertEquals(null, old.command("GET", "stale")); // its writes of the split are gone with its data
        }
        String left = String.join(" ", names);
        for (String ns : names) {
            assertFalse(namespaces().contains(ns), ns + " left behind among " + namespaces() + " (" + left + ")");
        }
    }

    /** {@code SET key 1} and {@code WAIT 1 1000} on one connection (WAIT waits for that connection's own writes). */
    private static Object writeAndWait(RedisServer server, String key) {
        try (Resp resp = Resp.connect(server.host(), server.port(), Duration.ofSeconds(5))) {
            assertEquals("OK", resp.call("SET", key, "1"));
            return resp.call("WAIT", "1", "1000");
        }
    }

    private static String namespaces() {
        try {
            Process p = new ProcessBuilder("ip", "netns", "list")
                    .redirectErrorStream(true)
                    .start();
            p.waitFor(10, TimeUnit.SECONDS);
            return new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
