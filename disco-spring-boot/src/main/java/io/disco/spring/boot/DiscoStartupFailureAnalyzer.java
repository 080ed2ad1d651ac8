package io.disco.spring.boot;

import io.disco.fencing.AccessDeniedException;
import java.util.Locale;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Boot's failure analysis of {@code disco.fail-fast=true} with etcd unreachable at startup
 * ({@link DiscoStartupException}, and nothing else): instead of a stack trace, the "APPLICATION FAILED TO START"
 * report says what failed (the client could not get its lease), the endpoints, the cause the provider found,
 * and what to do about that cause, or to start without etcd ({@code disco.fail-fast=false}). Registered in
 * {@code META-INF/spring.factories}.
 */
class DiscoStartupFailureAnalyzer extends AbstractFailureAnalyzer<DiscoStartupException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DiscoStartupException cause) {
        Throwable reason = cause.getCause() != null ? cause.getCause() : cause;
        String endpoints = cause.endpoints().isEmpty()
                ? "those of the application's own jetcd Client bean"
                : String.join(", ", cause.endpoints());
        String description = "The disco client could not get its lease from etcd at startup, and disco.fail-fast=true"
                + " does not let the application start without one.\n\n"
                + "Endpoints: " + endpoints + "\n"
                + "Cause: " + reason.getMessage();
        String action =
                fix(reason) + "\n\nOr, to start while etcd is unreachable, set disco.fail-fast=false (the default):"
                        + " the application starts with its 'disco' health DOWN, and the client gets its lease as soon as etcd answers.";
        return new FailureAnalysis(description, action, cause);
    }

    /** What to do about the provider's failure, by what it says. */
    private static String fix(Throwable reason) {
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
}
