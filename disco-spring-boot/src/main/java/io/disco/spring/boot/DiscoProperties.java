package io.disco.spring.boot;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code disco.*} properties. Every value is checked when the context binds it: a value out of its
 * range fails startup with a message that names the property and the allowed range.
 *
 * @param enabled whether disco is auto-configured at all
 * @param clientId the application's name for itself (for example its service and instance), written into
 *     the metadata of every claim; at most 256 characters; empty for none
 * @param failFast whether the application fails to start when etcd cannot be reached; by default it
 *     starts, its {@code disco} health is DOWN, and the client heals once etcd answers
 * @param etcd how to reach etcd
 * @param session the lease every claim of this application is made through
 * @param shutdown the graceful shutdown
 * @param guard the server-side guard of this application's own resources
 */
@ConfigurationProperties("disco")
public record DiscoProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("") String clientId,
        @DefaultValue("false") boolean failFast,
        @DefaultValue Etcd etcd,
        @DefaultValue Session session,
        @DefaultValue Shutdown shutdown,
        @DefaultValue Guard guard) {

    /** etcd's largest lease TTL. */
    static final Duration MAX_TTL = Duration.ofSeconds(9_000_000_000L);

    /**
     * Checks {@code disco.client-id}.
     *
     * @param enabled whether disco is auto-configured at all
     * @param clientId the application's name for itself; at most 256 characters
     * @param failFast whether the application fails to start when etcd cannot be reached
     * @param etcd how to reach etcd
     * @param session the lease every claim of this application is made through
     * @param shutdown the graceful shutdown
     * @param guard the server-side guard of this application's own resources
     */
    public DiscoProperties {
        if (clientId.length() > 256) {
            throw new IllegalArgumentException(
                    "disco.client-id must be at most 256 characters, got " + clientId.length());
        }
    }

    /**
     * @param endpoints the etcd endpoints, for example {@code http://10.0.0.1:2379}; all {@code http://}
     *     (plaintext) or all {@code https://} (always TLS: the server's certificate is verified with
     *     {@code disco.etcd.ssl.bundle}'s trust store, else the JVM's default trust store)
     * @param user the etcd user, if etcd's authentication is on
     * @param password the etcd user's password
     * @param authority the authority (host name) to present to etcd's TLS certificate, when it is not the
     *     endpoint's host
     * @param namespace a prefix etcd puts in front of every key this application reads and writes
     * @param requestTimeout how long each single request to etcd may take: the library's own wait for
     *     every answer, and a gRPC deadline on every unary call of the jetcd client (EtcdDeadlines);
     *     from 1 ms to 10 min
     * @param ssl TLS and mutual TLS through a Spring Boot SSL bundle
     */
    public record Etcd(
            @DefaultValue("http://127.0.0.1:2379") List<String> endpoints,
            String user,
            String password,
            String authority,
            String namespace,
            @DefaultValue("5s") Duration requestTimeout,
            @DefaultValue Ssl ssl) {

        /**
         * Checks the endpoints and {@code disco.etcd.request-timeout}.
         *
         * @param endpoints the etcd endpoints: at least one, none blank
         * @param user the etcd user, if etcd's authentication is on
         * @param password the etcd user's password (only with a user)
         * @param authority the authority to present to etcd's TLS certificate
         * @param namespace a prefix etcd puts in front of every key
         * @param requestTimeout how long each single request to etcd may take, from 1 ms to 10 min
         * @param ssl TLS and mutual TLS through a Spring Boot SSL bundle
         */
        public Etcd {
            if (endpoints.isEmpty() || endpoints.stream().anyMatch(e -> e == null || e.isBlank())) {
                throw new IllegalArgumentException(
                        "disco.etcd.endpoints must name at least one endpoint and no blank one, got " + endpoints);
            }
            within("disco.etcd.request-timeout", requestTimeout, Duration.ofMillis(1), Duration.ofMinutes(10));
            if (password != null && user == null) {
                throw new IllegalArgumentException("disco.etcd.password is set but disco.etcd.user is not");
            }
        }
    }

    /**
     * @param bundle the name of a Spring Boot SSL bundle ({@code spring.ssl.bundle.*}), for {@code https://}
     *     endpoints only: its trust store verifies etcd's certificate (instead of the JVM's default trust
     *     store), its key store (if any) is this client's certificate for mutual TLS
     */
    public record Ssl(String bundle) {}

    /**
     * @param ttl the lease TTL: how long a paused or partitioned instance keeps its locks and leaderships
     *     before another may take them; whole seconds, from 1 s to 9,000,000,000 s
     * @param grantMargin the least lease validity a grant is handed out with; default a third of the TTL;
     *     from 0 to less than the TTL
     * @param failoverAfter how long one etcd member may stay silent before a request is sent again
     *     (usually to another member) and a watch is moved; from 1 ms to 1 min
     * @param ownerWait how long an acquisition ({@code lock()}, a semaphore's {@code acquire()}, ...) waits for
     *     the client to have a lease while it has none (etcd unreachable past the TTL, or not reached yet),
     *     counted from when it lost it; past it the acquisition throws
     *     {@code io.disco.client.BackendUnavailableException}, naming the endpoints and the cause, so request
     *     threads are not parked for as long as etcd is down; default the TTL; from 1 ms to 1 h
     */
    public record Session(
            @DefaultValue("30s") Duration ttl,
            Duration grantMargin,
            @DefaultValue("150ms") Duration failoverAfter,
            Duration ownerWait) {

        /**
         * Checks {@code disco.session.*}.
         *
         * @param ttl the lease TTL, whole seconds from 1 s to 9,000,000,000 s
         * @param grantMargin the least lease validity a grant is handed out with, from 0 to less than the TTL
         * @param failoverAfter how long one etcd member may stay silent, from 1 ms to 1 min
         * @param ownerWait how long an acquisition waits for a lease while the client has none, from 1 ms to
         *     1 h; null for the TTL
         */
        public Session {
            if (ownerWait != null) {
                within("disco.session.owner-wait", ownerWait, Duration.ofMillis(1), Duration.ofHours(1));
            }
            within("disco.session.ttl", ttl, Duration.ofSeconds(1), MAX_TTL);
            if (ttl.getNano() != 0) {
                throw new IllegalArgumentException(
                        "disco.session.ttl must be whole seconds (1s to 9000000000s), got " + ttl);
            }
            if (grantMargin != null && (grantMargin.isNegative() || grantMargin.compareTo(ttl) >= 0)) {
                throw new IllegalArgumentException(
                        "disco.session.grant-margin must be from 0 to less than disco.session.ttl (" + ttl + "), got "
                                + grantMargin);
            }
            within("disco.session.failover-after", failoverAfter, Duration.ofMillis(1), Duration.ofMinutes(1));
        }
    }

    /**
     * @param timeout how long graceful shutdown waits for each leadership to step down (a leader's task
     *     to stop); from 0 to 10 min
     */
    public record Shutdown(@DefaultValue("5s") Duration timeout) {

        /**
         * Checks {@code disco.shutdown.timeout}.
         *
         * @param timeout how long graceful shutdown waits for each leadership to step down, from 0 to 10 min
         */
        public Shutdown {
            within("disco.shutdown.timeout", timeout, Duration.ZERO, Duration.ofMinutes(10));
        }
    }

    /**
     * @param http the servlet filter (or WebFlux filter) that guards this application's HTTP resources
     * @param grpc the gRPC server interceptor that guards this application's gRPC services (with Spring gRPC)
     */
    public record Guard(
            @DefaultValue Http http, @DefaultValue Grpc grpc) {}

    /**
     * @param enabled whether to register the guard's gRPC server interceptor as a global interceptor of
     *     Spring gRPC's servers
     * @param keyMetadata the request metadata entry that names a call's resource, for one mark per
     *     resource (a keyed guard); none by default: one mark for every call
     * @param store where the marks are persisted so that they survive restarts
     * @param drainTimeout how long a call with a newer token waits for calls with older tokens still
     *     running before it is closed UNAVAILABLE; from 0 to 10 min
     * @param issuedBound whether tokens above etcd's current revision are rejected instead of raising the
     *     mark; needs the jetcd client of this application
     */
    public record Grpc(
            @DefaultValue("false") boolean enabled,
            String keyMetadata,
            @DefaultValue Store store,
            @DefaultValue("10s") Duration drainTimeout,
            @DefaultValue("true") boolean issuedBound) {

        /**
         * Checks {@code disco.guard.grpc.drain-timeout}.
         *
         * @param enabled whether to register the guard's gRPC server interceptor globally
         * @param keyMetadata the request metadata entry that names a call's resource; none by default
         * @param store where the marks are persisted
         * @param drainTimeout how long a call with a newer token waits for older ones, from 0 to 10 min
         * @param issuedBound whether tokens above etcd's current revision are rejected
         */
        public Grpc {
            within("disco.guard.grpc.drain-timeout", drainTimeout, Duration.ZERO, Duration.ofMinutes(10));
        }
    }

    /**
     * @param enabled whether to register the guard's servlet filter
     * @param urlPatterns the servlet URL patterns the filter guards, for example {@code /orders/*}; required
     *     when enabled: there is no default, so health probes and other paths are never guarded by accident
     * @param key how a request names its resource, for one mark per resource (a keyed guard)
     * @param store where the marks are persisted so that they survive restarts
     * @param drainTimeout how long a request with a newer token waits for requests with older tokens still
     *     running before it is answered 503; from 0 to 10 min
     * @param issuedBound whether tokens above etcd's current revision (nobody issued them) are rejected
     *     (400) instead of raising the mark; needs the jetcd client of this application
     */
    public record Http(
            @DefaultValue("false") boolean enabled,
            @DefaultValue List<String> urlPatterns,
            @DefaultValue Key key,
            @DefaultValue Store store,
            @DefaultValue("10s") Duration drainTimeout,
            @DefaultValue("true") boolean issuedBound) {

        /**
         * Checks {@code disco.guard.http.*}.
         *
         * @param enabled whether to register the guard's servlet filter
         * @param urlPatterns the servlet URL patterns the filter guards; required when enabled
         * @param key how a request names its resource
         * @param store where the marks are persisted
         * @param drainTimeout how long a request with a newer token waits for older ones, from 0 to 10 min
         * @param issuedBound whether tokens above etcd's current revision are rejected (400)
         */
        public Http {
            if (enabled && urlPatterns.isEmpty()) {
                throw new IllegalArgumentException(
                        "disco.guard.http.url-patterns must name at least one servlet URL pattern"
                                + " (for example /orders/*) when disco.guard.http.enabled is true: there is no default, so that health"
                                + " probes and other paths are not guarded by accident");
            }
            within("disco.guard.http.drain-timeout", drainTimeout, Duration.ZERO, Duration.ofMinutes(10));
        }
    }

    /**
     * @param source where a request names its resource: {@code none} (one mark for every guarded path),
     *     {@code path-variable} (a variable of {@code pattern}) or {@code header}
     * @param name the path variable's or the header's name
     * @param pattern for {@code path-variable}: a Spring path pattern with the variable, for example
     *     {@code /orders/{order}/**}
     */
    public record Key(@DefaultValue("none") KeySource source, String name, String pattern) {

        /**
         * Checks {@code disco.guard.http.key.*}.
         *
         * @param source where a request names its resource
         * @param name the path variable's or the header's name; required unless the source is {@code none}
         * @param pattern for {@code path-variable}: a Spring path pattern with the variable
         */
        public Key {
            if (source != KeySource.NONE && (name == null || name.isBlank())) {
                throw new IllegalArgumentException("disco.guard.http.key.name must name the "
                        + source.name().toLowerCase(Locale.ROOT).replace('_', '-')
                        + " when disco.guard.http.key.source is "
                        + source.name().toLowerCase(Locale.ROOT).replace('_', '-'));
            }
            if (source == KeySource.PATH_VARIABLE && (pattern == null || !pattern.contains("{" + name + "}"))) {
                throw new IllegalArgumentException(
                        "disco.guard.http.key.pattern must be a path pattern with the variable {" + name
                                + "} when disco.guard.http.key.source is path-variable, got " + pattern);
            }
        }
    }

    /** Where a keyed guard finds a request's resource key. */
    public enum KeySource {
        /** One mark for every guarded path. */
        NONE,
        /** A variable of a path pattern. */
        PATH_VARIABLE,
        /** A request header. */
        HEADER
    }

    /** @param file a file that keeps the marks across restarts; none by default (marks start empty) */
    public record Store(Path file) {}

    private static void within(String property, Duration value, Duration min, Duration max) {
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(property + " must be from " + min + " to " + max + ", got " + value);
        }
    }
}
