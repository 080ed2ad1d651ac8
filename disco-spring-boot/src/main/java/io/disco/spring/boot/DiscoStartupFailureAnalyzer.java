package io.disco.spring.boot;

import io.disco.fencing.AccessDeniedException;
import java.util.Locale;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Boot's failure analysis of {@code disco.fail-fast=true} with the backend (etcd, ZooKeeper, Redis) unreachable at
 * startup ({@link DiscoStartupException}, and nothing else): instead of a stack trace, the "APPLICATION FAILED TO
 * START" report says what failed (the client could not get its lease, or its session), the endpoints, the cause the
 * provider found, and what to do about that cause, or to start without the backend ({@code disco.fail-fast=false}).
 * Also of Redis refusing the client for settings that would not keep tokens safe (persistence, eviction): the
 * setting to change, and the property that opts out.
 * Registered in {@code META-INF/spring.factories}.
 */
class DiscoStartupFailureAnalyzer extends AbstractFailureAnalyzer<DiscoStartupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DiscoStartupException cause) {
        Throwable reason = cause.getCause() != null ? cause.getCause() : cause;
        DiscoStartupException.Backend backend = cause.backend();
        String endpoints = cause.endpoints().isEmpty() ? backend.applicationsOwn : String.join(", ", cause.endpoints());
        if (cause.refused()) {
            return refused(backend, endpoints, reason, cause);
        }
        String description = "The disco client could not get its " + backend.owner + " from " + backend.name
                + " at startup, and disco.fail-fast=true does not let the application start without one.\n\n"
                + backend.endpointsLabel + ": " + endpoints + "\n"
                + "Cause: " + reason.getMessage() + rootCause(backend, reason);
        String action = switch (backend) {
                    case ETCD -> etcdFix(reason);
                    case ZOOKEEPER -> zooKeeperFix(reason);
                    case REDIS -> redisFix(reason);
                }
                + "\n\nOr, to start while " + backend.name + " is unreachable, set disco.fail-fast=false (the default):"
                + " the application starts with its 'disco' health DOWN, and the client gets its " + backend.owner
                + " as soon as " + backend.name + " answers.";
        return new FailureAnalysis(description, action, cause);
    }

    /** What to do about the etcd provider's failure, by what it says. */
    private static String etcdFix(Throwable reason) {
        for (Throwable t = reason; t != null; t = t.getCause()) {
            if (t instanceof AccessDeniedException) {
                return "Check disco.etcd.user and disco.etcd.password, and that the user's roles let it grant leases.";
            }
        }
        String why = String.valueOf(reason.getMessage()).toLowerCase(Locale.ROOT);
        if (why.contains("authentication failed")) {
            return "Check disco.etcd.user and disco.etcd.password, and that the user's roles let it grant leases.";
        }
        if (why.contains("tls")) {
            return "Fix the TLS set-up: https:// endpoints are always TLS, verified with the trust store of the SSL bundle"
                    + " that disco.etcd.ssl.bundle names (spring.ssl.bundle.*), else the JVM's default trust store; it must trust"
                    + " the CA that signed etcd's certificate, which must name the endpoint's host. A plaintext etcd takes"
                    + " http:// endpoints.";
        }
        if (why.contains("unknown host")) {
            return "Correct the host name in disco.etcd.endpoints, or the DNS that should resolve it.";
        }
        if (why.contains("connection refused")) {
            return "Start etcd at those endpoints, or set disco.etcd.endpoints to where etcd listens: nothing listens there.";
        }
        return "Check that etcd runs at those endpoints and answers (etcdctl endpoint health), that this host can reach"
                + " them, and that disco.etcd.request-timeout leaves it time to answer; or correct disco.etcd.endpoints.";
    }

    /**
     * On Redis, the innermost cause when the provider's message does not say it (Lettuce's "Unable to connect" wraps
     * Netty's "Connection refused"); nothing on the other backends, whose providers name the cause themselves.
     */
    private static String rootCause(DiscoStartupException.Backend backend, Throwable reason) {
        if (backend != DiscoStartupException.Backend.REDIS) {
            return "";
        }
        Throwable root = reason;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = String.valueOf(root.getMessage());
        return root == reason || String.valueOf(reason.getMessage()).contains(message) ? "" : " (" + message + ")";
    }

    /**
     * Redis answered and refused the client: its settings would not keep tokens safe (the start check). Whatever
     * {@code disco.fail-fast}: an application must not start on a server that could issue a token twice.
     */
    private static FailureAnalysis refused(
            DiscoStartupException.Backend backend, String endpoints, Throwable reason, DiscoStartupException cause) {
        // the provider names its builder's opt-outs; an application of the starter sets them as properties
        String why = String.valueOf(reason.getMessage())
                .replace(
                        "RedisOptions.builder().unsafeWithoutDurableTokens()",
                        "disco.redis.unsafe-without-durable-tokens=true")
                .replace(
                        "RedisOptions.builder().persistenceCheckedElsewhere()",
                        "disco.redis.persistence-checked-elsewhere=true");
        String description = "The disco client does not start on " + backend.name
                + ": its settings would not keep fencing tokens safe, and a token issued twice would let a stale"
                + " holder's write through a guard.\n\n"
                + backend.endpointsLabel + ": " + endpoints + "\n"
                + "Cause: " + why;
        String action;
        if (why.contains("maxmemory-policy")) {
            action =
                    "Set maxmemory-policy noeviction (or a volatile-* policy) on the server (CONFIG SET maxmemory-policy"
                            + " noeviction, and in redis.conf): an allkeys-* policy can evict a name's token record.";
        } else if (why.contains("refused CONFIG GET")) {
            action = "Allow this client CONFIG GET (its ACL user), so that disco can check the persistence settings;"
                    + " or, if every data node runs appendonly yes, appendfsync always and no allkeys-* eviction and"
                    + " CONFIG cannot be allowed (a managed service), set disco.redis.persistence-checked-elsewhere=true.";
        } else {
            action =
                    "Set appendonly yes and appendfsync always on every data node (CONFIG SET appendonly yes, CONFIG SET"
                            + " appendfsync always, and the same in redis.conf), so that a restart keeps every token issued."
                            + " Where CONFIG is not allowed and the servers are so configured, set"
                            + " disco.redis.persistence-checked-elsewhere=true. For tests and caches only, never for a resource"
                            + " fenced with the tokens: disco.redis.unsafe-without-durable-tokens=true.";
        }
        return new FailureAnalysis(description, action, cause);
    }

    /** What to do about the Redis provider's failure, by what it and Lettuce say (the whole chain of causes). */
    private static String redisFix(Throwable reason) {
        StringBuilder chain = new StringBuilder();
        for (Throwable t = reason; t != null; t = t.getCause()) {
            chain.append(t.getClass().getName())
                    .append(": ")
                    .append(t.getMessage())
                    .append('\n');
        }
        String why = chain.toString().toLowerCase(Locale.ROOT);
        if (why.contains("noauth") || why.contains("wrongpass") || why.contains("authentication")) {
            return "Check spring.data.redis.username and spring.data.redis.password (for the sentinels,"
                    + " spring.data.redis.sentinel.username and .password), and that the user may run disco's commands"
                    + " (EVAL, CONFIG GET, INFO, SUBSCRIBE, WAIT).";
        }
        if (why.contains("connection refused")) {
            return "Start Redis there, or set spring.data.redis.host and .port (or .url, .sentinel.*, .cluster.nodes) to"
                    + " where Redis listens: nothing listens there.";
        }
        if (why.contains("unknownhost") || why.contains("unknown host") || why.contains("name or service not known")) {
            return "Correct the host name in spring.data.redis.host (or .url, .sentinel.nodes, .cluster.nodes), or the"
                    + " DNS that should resolve it.";
        }
        if (why.contains("ssl") || why.contains("tls") || why.contains("handshake")) {
            return "Fix the TLS set-up: spring.data.redis.ssl.enabled=true with the SSL bundle spring.data.redis.ssl.bundle"
                    + " names (spring.ssl.bundle.*), else the JVM's default trust store; it must trust the CA that"
                    + " signed Redis's certificate. A plaintext Redis takes no ssl.* property.";
        }
        return "Check that Redis runs there and answers (redis-cli -h <host> -p <port> PING), that this host can reach"
                + " it, and that disco.redis.connect-timeout leaves it time to answer; or correct spring.data.redis.*.";
    }

    /** What to do about the ZooKeeper provider's failure, by what it says (its diagnosis per server). */
    private static String zooKeeperFix(Throwable reason) {
        String why = String.valueOf(reason.getMessage()).toLowerCase(Locale.ROOT);
        if (why.contains("unknown host")) {
            return "Correct the host name in disco.zookeeper.connect-string, or the DNS that should resolve it.";
        }
        if (why.contains("connection refused")) {
            return "Start ZooKeeper at that connect string, or set disco.zookeeper.connect-string to where ZooKeeper"
                    + " listens: nothing listens there.";
        }
        if (why.contains("did not complete zookeeper's handshake")) {
            return "The servers accept connections but did not complete ZooKeeper's handshake: if they listen with TLS"
                    + " (a secureClientPort), set disco.zookeeper.ssl.enabled=true with a trust store that trusts their"
                    + " certificates (disco.zookeeper.ssl.trust-store.*); otherwise check that ZooKeeper listens there"
                    + " and is not overloaded.";
        }
        return "Check that ZooKeeper runs at that connect string and answers (echo ruok | nc <host> <port>), that this"
                + " host can reach it, and that disco.zookeeper.connection-timeout leaves it time to answer; or"
                + " correct disco.zookeeper.connect-string.";
    }
}
