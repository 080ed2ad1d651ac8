package io.disco.provider.redis;

import io.disco.core.SessionListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Executor;

/**
 * How a {@link RedisSession} lives, waits and checks the server: its time to live, the replica acknowledgements a
 * grant needs, its timeouts, where it runs user code, and the explicit opt-outs of the start check
 * ({@code ServerCheck}, see {@link RedisProvider}).
 */
public final class RedisOptions {

    /** The shortest time to live: renewals go every third of it. */
    static final Duration MIN_TTL = Duration.ofMillis(500);
    /** The longest time to live. */
    static final Duration MAX_TTL = Duration.ofHours(1);
    /** The longest client id: the metadata of a claim should stay small. */
    static final int MAX_CLIENT_ID_LENGTH = 256;

    private final Duration ttl;
    private final Integer replicaAcks;
    private final Duration grantAckTimeout;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Executor callbackExecutor;
    private final Duration ownerWait;
    private final List<SessionListener> listeners;
    private final String clientId;
    private final boolean unsafeWithoutDurableTokens;
    private final boolean persistenceCheckedElsewhere;

    private RedisOptions(Builder b) {
        this.ttl = b.ttl;
        this.replicaAcks = b.replicaAcks;
        this.grantAckTimeout = b.grantAckTimeout != null
                ? b.grantAckTimeout
                : Duration.ofMillis(Math.min(1_000, b.ttl.toMillis() / 3));
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.callbackExecutor = b.callbackExecutor;
        this.ownerWait = b.ownerWait;
        this.listeners = List.copyOf(b.listeners);
        this.clientId = b.clientId;
        this.unsafeWithoutDurableTokens = b.unsafeWithoutDurableTokens;
        this.persistenceCheckedElsewhere = b.persistenceCheckedElsewhere;
    }

    /** @return the defaults: a TTL of 30 s, the deployment's replica acknowledgements, timeouts of 10 s */
    public static RedisOptions defaults() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder with these options, to change some */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.ttl = ttl;
        b.replicaAcks = replicaAcks;
        b.grantAckTimeout = grantAckTimeout;
        b.connectTimeout = connectTimeout;
        b.requestTimeout = requestTimeout;
        b.callbackExecutor = callbackExecutor;
        b.ownerWait = ownerWait;
        b.listeners.addAll(listeners);
        b.clientId = clientId;
        b.unsafeWithoutDurableTokens = unsafeWithoutDurableTokens;
        b.persistenceCheckedElsewhere = persistenceCheckedElsewhere;
        return b;
    }

    /**
     * @return the owner's time to live: every claim key of a session expires on the server this long after the
     *     session's last renewal reached it; renewals go every third of it, and the session declares itself lost
     *     shortly before the server can expire anything (see {@link RedisSession})
     */
    public Duration ttl() {
        return ttl;
    }

    /**
     * @return how many replicas must have received a grant's write ({@code WAIT}) before its token is handed out;
     *     empty for the deployment's default: 0 on a standalone server, 1 under Sentinel and in a Cluster
     */
    public OptionalInt replicaAcks() {
        return replicaAcks == null ? OptionalInt.empty() : OptionalInt.of(replicaAcks);
    }

    /**
     * @return how long a grant waits for its replica acknowledgements before it fails closed; by default 1 s, or a
     *     third of the TTL if that is shorter
     */
    public Duration grantAckTimeout() {
        return grantAckTimeout;
    }

    /** @return how long opening a session waits for Redis to be connected and to answer */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return how long a call without a timeout of its own (tryLock, unlock, a withdrawal) waits for Redis */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return where futures handed to the user complete, or null for disco's default pool */
    public Executor callbackExecutor() {
        return callbackExecutor;
    }

    /**
     * @return how long an acquisition of the client waits for a session while it has none; empty for the default,
     *     the TTL
     */
    public Optional<Duration> ownerWait() {
        return Optional.ofNullable(ownerWait);
    }

    /** @return the listeners every session with these options tells of its events; a renewal is one renewal round */
    public List<SessionListener> listeners() {
        return listeners;
    }

    /** @return the application's name for itself, written into the metadata of every claim; empty by default */
    public String clientId() {
        return clientId;
    }

    /** @return whether the start check lets a server without {@code appendonly yes, appendfsync always} through */
    public boolean unsafeWithoutDurableTokens() {
        return unsafeWithoutDurableTokens;
    }

    /** @return whether the start check skips the persistence settings because {@code CONFIG} is not allowed */
    public boolean persistenceCheckedElsewhere() {
        return persistenceCheckedElsewhere;
    }

    /** Builds {@link RedisOptions}. */
    public static final class Builder {
        private Duration ttl = Duration.ofSeconds(30);
        private Integer replicaAcks;
        private Duration grantAckTimeout;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Executor callbackExecutor;
        private Duration ownerWait;
        private String clientId = "";
        private final List<SessionListener> listeners = new ArrayList<>();
        private boolean unsafeWithoutDurableTokens;
        private boolean persistenceCheckedElsewhere;

        private Builder() {}

        /**
         * @param ttl the owner's time to live, from 500 ms to 1 hour (see {@link RedisOptions#ttl()})
         * @return this builder
         * @throws NullPointerException if {@code ttl} is null
         * @throws IllegalArgumentException if {@code ttl} is out of range
         */
        public Builder ttl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0) {
                throw new IllegalArgumentException("ttl must be from " + MIN_TTL.toMillis() + " ms to "
                        + MAX_TTL.toMinutes() + " min, got " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /**
         * @param acks how many replicas must have received a grant's write before its token is handed out (Redis's
         *     {@code WAIT}); fewer within {@link #grantAckTimeout} fails the acquisition with an
         *     {@link UnsafeTokenException}. 0 to 16; the default is 0 on a standalone server, 1 under Sentinel and
         *     in a Cluster
         * @return this builder
         * @throws IllegalArgumentException if {@code acks} is out of range
         */
        public Builder replicaAcks(int acks) {
            if (acks < 0 || acks > 16) {
                throw new IllegalArgumentException("replicaAcks must be from 0 to 16, got " + acks);
            }
            this.replicaAcks = acks;
            return this;
        }

        /**
         * @param timeout how long a grant waits for its replica acknowledgements, positive, at most 1 min
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is out of range
         */
        public Builder grantAckTimeout(Duration timeout) {
            this.grantAckTimeout = positive(timeout, "grantAckTimeout");
            if (timeout.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("grantAckTimeout must be at most 1 min, got " + timeout);
            }
            return this;
        }

        /**
         * @param timeout how long opening a session waits for Redis, positive
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * @param timeout how long a call without a timeout of its own waits for Redis, positive
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * @param executor where futures handed to the user complete; null for disco's default pool of daemon threads
         * @return this builder
         */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = executor;
            return this;
        }

        /**
         * @param wait how long an acquisition of the client waits for a session while the client has none, counted
         *     from when it lost it; positive; the default is the TTL
         * @return this builder
         * @throws NullPointerException if {@code wait} is null
         * @throws IllegalArgumentException if {@code wait} is not positive
         */
        public Builder ownerWait(Duration wait) {
            this.ownerWait = positive(wait, "ownerWait");
            return this;
        }

        /**
         * Adds a listener of session and service events (see {@link SessionListener}).
         *
         * @param listener the listener
         * @return this builder
         * @throws NullPointerException if {@code listener} is null
         */
        public Builder listener(SessionListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * @param clientId the application's name for itself, written into the metadata of every claim; empty for
         *     none; at most 256 characters
         * @return this builder
         * @throws NullPointerException if {@code clientId} is null
         * @throws IllegalArgumentException if {@code clientId} is longer than 256 characters
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.length() > MAX_CLIENT_ID_LENGTH) {
                throw new IllegalArgumentException("clientId must be at most " + MAX_CLIENT_ID_LENGTH
                        + " characters (it is written into every claim), got " + clientId.length());
            }
            this.clientId = clientId;
            return this;
        }

        /**
         * Lets the start check accept a server whose persistence cannot keep tokens across a restart (not
         * {@code appendonly yes} with {@code appendfsync always}): after such a restart tokens may be issued again
         * that were issued before it. For tests and caches, never for a resource fenced with the tokens.
         *
         * @return this builder
         */
        public Builder unsafeWithoutDurableTokens() {
            this.unsafeWithoutDurableTokens = true;
            return this;
        }

        /**
         * Skips the start check's persistence settings, for a server that refuses {@code CONFIG} (an ACL, a renamed
         * command, a managed service): the operator vouches that every data node runs {@code appendonly yes},
         * {@code appendfsync always} and no {@code allkeys-*} eviction.
         *
         * @return this builder
         */
        public Builder persistenceCheckedElsewhere() {
            this.persistenceCheckedElsewhere = true;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException if the owner wait or the grant acknowledgement timeout does not fit the TTL
         */
        public RedisOptions build() {
            if (grantAckTimeout != null && grantAckTimeout.compareTo(ttl) >= 0) {
                throw new IllegalArgumentException("grantAckTimeout (" + grantAckTimeout
                        + ") must be shorter than the ttl (" + ttl + "): a grant would outlive its claim");
            }
            return new RedisOptions(this);
        }

        static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
            return d;
        }
    }
}
