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
 * @param failFast whether the application fails to start when the backend (etcd, ZooKeeper, Redis) cannot be
 *     reached;
 *     by default it starts, its {@code disco} health is DOWN, and the client heals once the backend answers
 * @param etcd how to reach etcd
 * @param zookeeper how to reach ZooKeeper: set {@code disco.zookeeper.connect-string} (or define a
 *     {@code CuratorFramework} bean) to run disco on ZooKeeper instead of etcd
 * @param redis what disco needs of Redis beyond Spring Boot's own connection ({@code spring.data.redis.*}): an
 *     application with Spring Data Redis and neither etcd nor ZooKeeper configured runs disco on that Redis
 * @param session the lease (on ZooKeeper: the session) every claim of this application is made through
 * @param shutdown the graceful shutdown
 * @param guard the server-side guard of this application's own resources
 */
@ConfigurationProperties("disco")
public record DiscoProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue("") String clientId,
        @DefaultValue("false") boolean failFast,
        @DefaultValue Etcd etcd,
        @DefaultValue ZooKeeper zookeeper,
        @DefaultValue Redis redis,
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
     * @param failFast whether the application fails to start when the backend cannot be reached
     * @param etcd how to reach etcd
     * @param zookeeper how to reach ZooKeeper
     * @param redis what disco needs of Redis beyond Spring Boot's own connection
     * @param session the lease (on ZooKeeper: the session) every claim of this application is made through
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
     * @param enabled whether etcd may be disco's backend at all: {@code false} leaves the application's own jetcd
     *     {@code Client} (or {@code EtcdConnectionDetails}) bean to other uses, so that another backend's
     *     configuration is not refused as a second backend
     */
    public record Etcd(
            @DefaultValue("http://127.0.0.1:2379") List<String> endpoints,
            String user,
            String password,
            String authority,
            String namespace,
            @DefaultValue("5s") Duration requestTimeout,
            @DefaultValue Ssl ssl,
            @DefaultValue("true") boolean enabled) {

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
         * @param enabled whether etcd may be disco's backend at all
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
     * ZooKeeper, disco's backend when {@code connect-string} is set or the application defines a
     * {@code CuratorFramework} bean (which is then used as it is, and never closed by disco; these properties but
     * {@code enabled} and {@code request-timeout} are for the client the starter builds).
     *
     * @param enabled whether ZooKeeper may be disco's backend at all: {@code false} leaves the application's own
     *     {@code CuratorFramework} bean to other uses, so that another backend's configuration is not refused as a
     *     second backend
     * @param connectString the ZooKeeper servers, {@code host:port[,host:port...][/chroot]}, for example
     *     {@code zk-0:2181,zk-1:2181,zk-2:2181}
     * @param sessionTimeout the session timeout the client asks for: the owner's time to live, as etcd's lease TTL
     *     is; the server negotiates it into its own bounds ({@code minSessionTimeout} to {@code maxSessionTimeout},
     *     by default 2 to 20 ticks), and the health shows the negotiated one; by default {@code disco.session.ttl};
     *     from 1 ms to 24 h
     * @param connectionTimeout how long the client waits for a connection to ZooKeeper: when a session is opened
     *     (at startup too) and in Curator's retries; from 1 ms to 10 min
     * @param requestTimeout how long a call that takes no timeout of its own ({@code unlock()}, a withdrawal)
     *     waits for ZooKeeper; from 1 ms to 10 min
     * @param auth the authentication the client adds to its connection (ZooKeeper's {@code addAuthInfo})
     * @param ssl TLS (and mutual TLS) to the servers' secure client port
     */
    public record ZooKeeper(
            @DefaultValue("true") boolean enabled,
            String connectString,
            Duration sessionTimeout,
            @DefaultValue("15s") Duration connectionTimeout,
            @DefaultValue("10s") Duration requestTimeout,
            @DefaultValue Auth auth,
            @DefaultValue ZooKeeperSsl ssl) {

        /** The longest session timeout the client may ask for. */
        static final Duration MAX_SESSION_TIMEOUT = Duration.ofHours(24);

        /**
         * Checks {@code disco.zookeeper.*}.
         *
         * @param enabled whether ZooKeeper may be disco's backend at all
         * @param connectString the ZooKeeper servers; when set, at least one server and no blank one
         * @param sessionTimeout the session timeout the client asks for, from 1 ms to 24 h; null for
         *     {@code disco.session.ttl}
         * @param connectionTimeout how long the client waits for a connection, from 1 ms to 10 min
         * @param requestTimeout how long a call without a timeout of its own waits, from 1 ms to 10 min
         * @param auth the authentication the client adds to its connection
         * @param ssl TLS to the servers' secure client port
         */
        public ZooKeeper {
            if (connectString != null) {
                String servers = connectString.contains("/")
                        ? connectString.substring(0, connectString.indexOf('/'))
                        : connectString;
                if (servers.isBlank()
                        || java.util.Arrays.stream(servers.split(",", -1)).anyMatch(String::isBlank)) {
                    throw new IllegalArgumentException("disco.zookeeper.connect-string must name at least one server"
                            + " and no blank one, as host:port[,host:port...][/chroot], got '" + connectString + "'");
                }
            }
            if (sessionTimeout != null) {
                within("disco.zookeeper.session-timeout", sessionTimeout, Duration.ofMillis(1), MAX_SESSION_TIMEOUT);
            }
            within(
                    "disco.zookeeper.connection-timeout",
                    connectionTimeout,
                    Duration.ofMillis(1),
                    Duration.ofMinutes(10));
            within("disco.zookeeper.request-timeout", requestTimeout, Duration.ofMillis(1), Duration.ofMinutes(10));
        }
    }

    /**
     * Redis, disco's backend when the application has Spring Boot's Redis connection (a {@code DataRedisConnectionDetails}
     * bean: {@code spring.data.redis.*}, or a service connection) and configures neither etcd nor ZooKeeper. Where Redis
     * is, and how to log in to it, are Boot's properties; these are only what disco needs beyond them. Setting any of
     * them (but {@code enabled}) configures Redis as explicitly as {@code disco.etcd.endpoints} configures etcd.
     *
     * @param enabled whether Redis may be disco's backend at all: {@code false} leaves the application's Redis
     *     connection to its other uses (a cache), and disco on etcd at its default endpoints
     * @param replicaAcks how many replicas must have received a grant's write ({@code WAIT}) before its token is
     *     handed out; 0 to 16; by default 0 on a standalone server, 1 under Sentinel and in a Cluster
     * @param grantAckTimeout how long a grant waits for those acknowledgements before it fails closed; by default
     *     1 s, or a third of the TTL if that is shorter; positive, at most 1 min and shorter than the TTL
     * @param connectTimeout how long opening a session waits for Redis to be connected and to answer: startup waits
     *     this long for the first session; from 1 ms to 10 min
     * @param requestTimeout how long a call without a timeout of its own ({@code unlock()}, a withdrawal) waits for
     *     Redis; from 1 ms to 10 min
     * @param unsafeWithoutDurableTokens whether the start check lets a server through whose persistence cannot keep
     *     tokens across a restart (not {@code appendonly yes} with {@code appendfsync always}): after such a restart
     *     tokens may be issued again. For tests and caches, never for a resource fenced with the tokens
     * @param persistenceCheckedElsewhere whether the start check skips the persistence settings, for a server that
     *     refuses {@code CONFIG} (an ACL, a managed service): the operator vouches that every data node runs
     *     {@code appendonly yes}, {@code appendfsync always} and no {@code allkeys-*} eviction
     */
    public record Redis(
            @DefaultValue("true") boolean enabled,
            Integer replicaAcks,
            Duration grantAckTimeout,
            @DefaultValue("10s") Duration connectTimeout,
            @DefaultValue("10s") Duration requestTimeout,
            @DefaultValue("false") boolean unsafeWithoutDurableTokens,
            @DefaultValue("false") boolean persistenceCheckedElsewhere) {

        /** Redis's longest owner TTL (the provider's). */
        static final Duration MAX_TTL = Duration.ofHours(1);

        /**
         * Checks {@code disco.redis.*}.
         *
         * @param enabled whether Redis may be disco's backend at all
         * @param replicaAcks the replica acknowledgements a grant needs, 0 to 16; null for the deployment's default
         * @param grantAckTimeout how long a grant waits for them, positive, at most 1 min; null for the default
         * @param connectTimeout how long opening a session waits, from 1 ms to 10 min
         * @param requestTimeout how long a call without a timeout of its own waits, from 1 ms to 10 min
         * @param unsafeWithoutDurableTokens whether a server without durable tokens is let through
         * @param persistenceCheckedElsewhere whether the persistence settings are not checked
         */
        public Redis {
            if (replicaAcks != null && (replicaAcks < 0 || replicaAcks > 16)) {
                throw new IllegalArgumentException("disco.redis.replica-acks must be from 0 to 16, got " + replicaAcks);
            }
            if (grantAckTimeout != null) {
                within("disco.redis.grant-ack-timeout", grantAckTimeout, Duration.ofMillis(1), Duration.ofMinutes(1));
            }
            within("disco.redis.connect-timeout", connectTimeout, Duration.ofMillis(1), Duration.ofMinutes(10));
            within("disco.redis.request-timeout", requestTimeout, Duration.ofMillis(1), Duration.ofMinutes(10));
        }
    }

    /**
     * @param scheme ZooKeeper's authentication scheme, for example {@code digest}
     * @param credentials the scheme's credentials, for {@code digest} {@code user:password}
     */
    public record Auth(String scheme, String credentials) {

        /**
         * Checks that both or neither are set.
         *
         * @param scheme ZooKeeper's authentication scheme
         * @param credentials the scheme's credentials
         */
        public Auth {
            if ((scheme == null) != (credentials == null)) {
                throw new IllegalArgumentException(
                        scheme == null
                                ? "disco.zookeeper.auth.credentials is set but disco.zookeeper.auth.scheme is not: name"
                                        + " the scheme (for example digest)"
                                : "disco.zookeeper.auth.scheme is " + scheme
                                        + " but disco.zookeeper.auth.credentials is not set (for digest: user:password)");
            }
            if (scheme != null && scheme.isBlank()) {
                throw new IllegalArgumentException("disco.zookeeper.auth.scheme must not be blank");
            }
        }
    }

    /**
     * TLS to ZooKeeper's secure client port, as the ZooKeeper client takes it (its Netty socket, with the key and
     * trust stores read from files; ZooKeeper reads JKS, PKCS12 and PEM).
     *
     * @param enabled whether the client connects with TLS ({@code zookeeper.client.secure} on the Netty socket)
     * @param trustStore what verifies the servers' certificates; none: the JVM's default trust store
     * @param keyStore this client's certificate and key, for servers that ask for one (mutual TLS); none by default
     * @param hostnameVerification whether a server's certificate must name the host the client connected to
     */
    public record ZooKeeperSsl(
            @DefaultValue("false") boolean enabled,
            @DefaultValue StoreFile trustStore,
            @DefaultValue StoreFile keyStore,
            @DefaultValue("true") boolean hostnameVerification) {

        /**
         * Checks that no store is given without TLS, and that every store given is a readable file.
         *
         * @param enabled whether the client connects with TLS
         * @param trustStore what verifies the servers' certificates
         * @param keyStore this client's certificate and key
         * @param hostnameVerification whether a server's certificate must name the host
         */
        public ZooKeeperSsl {
            trustStore.check("disco.zookeeper.ssl.trust-store", enabled);
            keyStore.check("disco.zookeeper.ssl.key-store", enabled);
        }

        /**
         * A key or trust store file, as ZooKeeper's client reads it.
         *
         * @param location the store's file: for the trust store, the certificates (a CA's) that verify the servers';
         *     for the key store, this client's certificate with its private key
         * @param password the store's password, if it has one
         * @param type the store's format, {@code JKS}, {@code PKCS12} or {@code PEM}; by default what the file's
         *     extension says
         */
        public record StoreFile(Path location, String password, String type) {

            void check(String property, boolean tls) {
                if (location == null) {
                    if (password != null || type != null) {
                        throw new IllegalArgumentException(
                                property + ".password or .type is set but " + property + ".location is not");
                    }
                    return;
                }
                if (!tls) {
                    throw new IllegalArgumentException(property + ".location is set but disco.zookeeper.ssl.enabled"
                            + " is false: set it to true to connect with TLS, or remove the store");
                }
                if (!java.nio.file.Files.isReadable(location)) {
                    throw new IllegalArgumentException(property + ".location " + location + " is not a readable file");
                }
            }
        }
    }

    /**
     * @param ttl the lease TTL: how long a paused or partitioned instance keeps its locks and leaderships
     *     before another may take them; whole seconds, from 1 s to 9,000,000,000 s. On ZooKeeper the session
     *     timeout the client asks for, unless {@code disco.zookeeper.session-timeout} is set; on Redis the session's
     *     time to live, at most 1 h
     * @param grantMargin the least lease validity a grant is handed out with; default a third of the TTL;
     *     from 0 to less than the TTL. etcd only (a ZooKeeper session is handed out with a third of its timeout)
     * @param failoverAfter how long one etcd member may stay silent before a request is sent again
     *     (usually to another member) and a watch is moved; from 1 ms to 1 min. etcd only
     * @param ownerWait how long an acquisition ({@code lock()}, a semaphore's {@code acquire()}, ...) waits for
     *     the client to have a lease (on ZooKeeper: a session) while it has none (the backend unreachable past the
     *     TTL, or not reached yet), counted from when it lost it; past it the acquisition throws
     *     {@code io.disco.client.BackendUnavailableException}, naming the endpoints and the cause, so request
     *     threads are not parked for as long as the backend is down; default the TTL (on ZooKeeper the session
     *     timeout); from 1 ms to 1 h
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
     * @param issuedBound whether tokens above the backend's bound (etcd's current revision, the zxid of a
     *     ZooKeeper write) are rejected instead of raising the mark; needs the application's backend client; Redis has
     *     no such bound: there it has no effect
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
         * @param issuedBound whether tokens above the backend's bound are rejected
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
     * @param issuedBound whether tokens above the backend's bound (etcd's current revision, the zxid of a
     *     ZooKeeper write: nobody issued them) are rejected (400) instead of raising the mark; needs the
     *     application's backend client; Redis has no such bound: there it has no effect
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
         * @param issuedBound whether tokens above the backend's bound are rejected (400)
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
