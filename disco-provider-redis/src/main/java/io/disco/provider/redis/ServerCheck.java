package io.disco.provider.redis;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The start check of a Redis server, when a session opens: Redis 7.0 or later; persistence that keeps every token
 * across a restart ({@code appendonly yes} with {@code appendfsync always}: Redis writes and fsyncs the AOF before it
 * answers); an eviction policy that cannot evict the token record (not {@code allkeys-*}). Each refusal names the
 * setting to change, or the option that opts out of it ({@link RedisOptions.Builder#unsafeWithoutDurableTokens},
 * {@link RedisOptions.Builder#persistenceCheckedElsewhere} where {@code CONFIG} is refused).
 */
final class ServerCheck {

    private ServerCheck() {}

    /**
     * @throws UnsafeTokenException if the server would not keep tokens safe, naming the setting
     * @throws DiscoException if the server is too old or does not answer in time
     */
    static void check(Link.Node node, RedisOptions options, String where, Duration timeout)
            throws InterruptedException {
        try {
            String server = Calls.await(node.commands().info("server"), timeout, where, "reading INFO server");
            String version = TokenLineage.field(server, "redis_version").orElse("?");
            if (!atLeast7(version)) {
                throw new DiscoException(where + " runs Redis " + version
                        + ": disco needs Redis 7.0 or later (scripts that replicate their effects, PEXPIRE XX)");
            }
            if (options.persistenceCheckedElsewhere()) {
                return;
            }
            Map<String, String> config;
            try {
                config = Calls.await(
                        node.commands().configGet("appendonly", "appendfsync", "maxmemory-policy"),
                        timeout,
                        where,
                        "reading CONFIG GET");
            } catch (DiscoException refused) {
                throw new UnsafeTokenException(
                        where + " refused CONFIG GET (" + refused.getCause()
                                + "), so disco cannot check that its tokens survive a restart: if every data node runs"
                                + " appendonly yes, appendfsync always and no allkeys-* eviction, say so with"
                                + " RedisOptions.builder().persistenceCheckedElsewhere()",
                        refused);
            }
            String policy = config.getOrDefault("maxmemory-policy", "");
            if (policy.startsWith("allkeys-")) {
                throw new UnsafeTokenException(where + " runs maxmemory-policy " + policy
                        + ", which can evict a name's token record and let its tokens start again low: set"
                        + " maxmemory-policy noeviction (or a volatile-* policy)");
            }
            if (options.unsafeWithoutDurableTokens()) {
                return;
            }
            String aof = config.getOrDefault("appendonly", "?");
            String fsync = config.getOrDefault("appendfsync", "?");
            if (!"yes".equals(aof) || !"always".equals(fsync)) {
                throw new UnsafeTokenException(where + " runs appendonly " + aof + ", appendfsync " + fsync
                        + ": a restart could lose tokens it issued and issue them again. Set"
                        + (!"yes".equals(aof) ? " appendonly yes" : "")
                        + (!"yes".equals(aof) && !"always".equals(fsync) ? " and" : "")
                        + (!"always".equals(fsync) ? " appendfsync always" : "")
                        + " (CONFIG SET, and in redis.conf), or accept it with"
                        + " RedisOptions.builder().unsafeWithoutDurableTokens()");
            }
        } catch (TimeoutException e) {
            throw new DiscoException(where + " did not answer the start check within " + timeout.toMillis() + " ms", e);
        }
    }

    static boolean atLeast7(String version) {
        try {
            return Integer.parseInt(version.split("\\.")[0]) >= 7;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
