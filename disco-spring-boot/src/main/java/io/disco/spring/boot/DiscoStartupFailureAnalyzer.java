package io.disco.spring.boot;

import io.disco.fencing.AccessDeniedException;
import java.util.Locale;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Boot's failure analysis of {@code disco.fail-fast=true} with the backend (etcd, ZooKeeper) unreachable at startup
 * ({@link DiscoStartupException}, and nothing else): instead of a stack trace, the "APPLICATION FAILED TO START"
 * report says what failed (the client could not get its lease, or its session), the endpoints, the cause the
 * provider found, and what to do about that cause, or to start without the backend ({@code disco.fail-fast=false}).
 * Registered in {@code META-INF/spring.factories}.
 */
class DiscoStartupFailureAnalyzer extends AbstractFailureAnalyzer<DiscoStartupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DiscoStartupException cause) {
        Throwable reason = cause.getCause() != null ? cause.getCause() : cause;
        DiscoStartupException.Backend backend = cause.backend();
        String endpoints = cause.endpoints().isEmpty() ? backend.applicationsOwn : String.join(", ", cause.endpoints());
        String description = "The disco client could not get its " + backend.owner + " from " + backend.name
                + " at startup, and disco.fail-fast=true does not let the application start without one.\n\n"
                + backend.endpointsLabel + ": " + endpoints + "\n"
                + "Cause: " + reason.getMessage();
        String action = (backend == DiscoStartupException.Backend.ETCD ? etcdFix(reason) : zooKeeperFix(reason))
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
