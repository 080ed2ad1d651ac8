package io.disco.provider.zookeeper;

import io.disco.core.SessionListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How a {@link ZooKeeperSession} waits and where it runs user code. The session's time to live is the
 * {@code CuratorFramework}'s session timeout (as the server negotiated it), not an option here.
 */
public final class ZooKeeperOptions {

    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Executor callbackExecutor;
    private final Duration ownerWait;
    private final List<SessionListener> listeners;
    private final String clientId;

    /** The longest client id: the data of a node should stay small. */
    static final int MAX_CLIENT_ID_LENGTH = 256;

    private ZooKeeperOptions(Builder b) {
        this.clientId = b.clientId;
        this.listeners = List.copyOf(b.listeners);
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.callbackExecutor = b.callbackExecutor;
        this.ownerWait = b.ownerWait;
    }

    /** @return the defaults: connect within 15 s, requests within 10 s, the default callback pool */
    public static ZooKeeperOptions defaults() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return how long {@link ZooKeeperSession#open} waits for the client to connect */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return how long a call that does not take a timeout (tryLock, unlock, a withdrawal) waits for ZooKeeper */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return where futures handed to the user complete, or null for disco's default pool */
    public Executor callbackExecutor() {
        return callbackExecutor;
    }

    /**
     * @return the listeners every session with these options tells of its events, in registration order; on
     *     ZooKeeper a renewal is the session's liveness request, sent every quarter of the session timeout
     *     (see {@link ZooKeeperSession}): answered, {@code renewed}; failed, {@code renewalFailing}
     */
    public List<SessionListener> listeners() {
        return listeners;
    }

    /**
     * @return how long an acquisition of the client ({@link ZooKeeperProvider}'s, or {@code Disco} over a
     *     {@link ZooKeeperDiscoBackend}) waits for a session while it has none; empty for the default, the session
     *     timeout: for {@code ZooKeeperProvider} the one ZooKeeper negotiated with the application's client (30 s if
     *     it has not connected yet when the client is made), for a {@code ZooKeeperDiscoBackend} its builder's
     */
    public java.util.Optional<Duration> ownerWait() {
        return java.util.Optional.ofNullable(ownerWait);
    }

    /**
     * @return the application's name for itself, written with the host, the process id, the acquiring thread's name
     *     and the time into the data of every lock, read/write lock and semaphore node it creates (see
     *     {@link io.disco.core.ClaimMetadata}); empty by default
     */
    public String clientId() {
        return clientId;
    }

    /** Builds {@link ZooKeeperOptions}. */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(15);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Executor callbackExecutor;
        private Duration ownerWait;
        private String clientId = "";
        private final List<SessionListener> listeners = new ArrayList<>();

        private Builder() {}

        /**
         * @param clientId the application's name for itself (for example its service and instance), written into the
         *     metadata of every claim (see {@link ZooKeeperOptions#clientId()}); empty for none; at most 256
         *     characters
         * @return this builder
         * @throws NullPointerException if {@code clientId} is null
         * @throws IllegalArgumentException if {@code clientId} is longer than 256 characters
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.length() > MAX_CLIENT_ID_LENGTH) {
                throw new IllegalArgumentException("clientId must be at most " + MAX_CLIENT_ID_LENGTH
                        + " characters (it is written into every claim's node), got " + clientId.length());
            }
            this.clientId = clientId;
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
         * @param wait how long an acquisition of the client waits for a session while the client has none (ZooKeeper
         *             unreachable, or not reached yet), counted from when it lost it; past it the acquisition throws
         *             {@code io.disco.client.BackendUnavailableException}, naming the connect string. Positive; the
         *             default is the session timeout
         * @return this builder
         * @throws NullPointerException if {@code wait} is null
         * @throws IllegalArgumentException if {@code wait} is not positive
         */
        public Builder ownerWait(Duration wait) {
            this.ownerWait = positive(wait, "ownerWait");
            return this;
        }

        /**
         * @param timeout how long opening a session waits for the client to connect, positive
         * @return this builder
         * @throws NullPointerException if {@code timeout} is null
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * @param timeout how long a call without a timeout of its own waits for ZooKeeper, positive
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

        /** @return the options */
        public ZooKeeperOptions build() {
            return new ZooKeeperOptions(this);
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
