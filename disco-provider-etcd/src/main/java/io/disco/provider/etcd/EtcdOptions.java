package io.disco.provider.etcd;

import io.disco.core.SessionListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Settings of an {@link EtcdSession}. Immutable; build with {@link #builder()}.
 *
 * <ul>
 *   <li>{@code ttl}: the lease TTL, a whole number of seconds from 1 s to etcd's maximum
 *       (9,000,000,000 s); default 30 s. It bounds how long a paused or partitioned owner keeps the
 *       lock before another can take it, and how long the service keeps going through an etcd outage.
 *       etcd may grant a longer TTL than asked (its minimum depends on its election timeout); the
 *       session uses the TTL the server granted.</li>
 *   <li>{@code requestTimeout}: how long the library waits for the answer to each single request to
 *       etcd; default 5 s. An etcd that does not answer within it gives a
 *       {@link io.disco.fencing.DiscoException} instead of a hang. jetcd's unary requests carry no gRPC
 *       deadline of their own: register {@link EtcdDeadlines#unary} on the client so that gRPC cancels
 *       them too. A write given up on may still be applied later; the library deletes any key such a
 *       late write creates.</li>
 *   <li>{@code callbackExecutor}: where every future handed to the user completes ({@code lockAsync()},
 *       {@code rLockAsync()}, {@code campaignAsync()}, every {@code done()}), and so where dependent stages
 *       attached to them run; default: a shared pool of daemon threads named {@code disco-callback-N}
 *       that grows as needed, so a callback that blocks delays no other. Never a thread that lease
 *       renewal or expiry detection depends on: a task that the executor runs on a session thread
 *       (a direct executor, for example) is handed to the default pool instead.</li>
 *   <li>{@code failoverAfter}: how long one etcd member may stay silent before the library stops
 *       relying on it; default 150 ms. A request (other than a proclamation) that has no answer after
 *       it is sent again, which jetcd's load balancing usually routes to another member, and again
 *       after twice as long, and so on, until one answer arrives or the request timeout passes; the
 *       first answer counts (every such request is safe to apply twice). A watch must confirm its
 *       creation, and answer a progress report when it has been silent (300 ms for a wait, 2 s for
 *       watches that guard against rare events), within twice this value, or it is moved. A member that froze (its TCP connection still up) therefore delays a
 *       request or a hand-over by a few times this value, not by the request timeout.</li>
 *   <li>{@code grantMargin}: the least lease validity a grant is handed out with; default a third of
 *       the granted TTL. When the session's lease has less validity left at the moment of acquiring
 *       (its renewals are being delayed), the grant waits for a renewal first, or fails if the lease
 *       is lost meanwhile.</li>
 *   <li>{@code ownerWait}: how long an acquisition of the client ({@link io.disco.client.Disco}) waits for a
 *       lease while the client has none (etcd unreachable past the TTL, or not reached yet), counted from when
 *       the client lost it; default the TTL. Past it the acquisition throws
 *       {@link io.disco.client.BackendUnavailableException}, naming the endpoints and the cause, and so do
 *       acquisitions that start later, at once, until the client has a lease again: a request thread in
 *       {@code lock()} is not parked for as long as etcd is down. A timed acquisition
 *       ({@code tryLock(timeout)}) whose timeout ends first returns as before. Only the client uses it.</li>
 *   <li>{@code clientId}: a name the application gives itself (for example its service and instance),
 *       written, with the host, the process id, the acquiring thread's name and the time, into the
 *       value of every lock, read/write lock and semaphore key it creates (see
 *       {@link io.disco.core.ClaimMetadata}); default empty, as the host and process id already say
 *       which process it is.</li>
 * </ul>
 */
public final class EtcdOptions {

    /** etcd's largest lease TTL (server constant {@code MaxLeaseTTL}). */
    static final long MAX_TTL_SECONDS = 9_000_000_000L;

    private static final EtcdOptions DEFAULTS = builder().build();

    private final Duration ttl;
    private final Duration requestTimeout;
    private final Executor callbackExecutor;
    private final Duration failoverAfter;
    private final Duration grantMargin;
    private final List<SessionListener> listeners;
    private final String clientId;
    private final Duration ownerWait;

    /** The longest client id: the value of a key should stay small. */
    static final int MAX_CLIENT_ID_LENGTH = 256;

    private EtcdOptions(Builder b) {
        this.clientId = b.clientId;
        this.listeners = List.copyOf(b.listeners);
        this.ttl = b.ttl;
        this.requestTimeout = b.requestTimeout;
        this.callbackExecutor = b.callbackExecutor;
        this.failoverAfter = b.failoverAfter;
        this.grantMargin = b.grantMargin;
        this.ownerWait = b.ownerWait;
        if (grantMargin != null && grantMargin.compareTo(ttl) >= 0) {
            throw new IllegalArgumentException("grantMargin must be shorter than the ttl (" + ttl + "), got "
                    + grantMargin + ": no grant could ever be handed out");
        }
    }

    /** @return the defaults: TTL 30 s, request timeout 5 s, failover after 150 ms, grant margin a third of the TTL */
    public static EtcdOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the lease TTL asked of etcd */
    public Duration ttl() {
        return ttl;
    }

    /** @return the deadline of every single request to etcd */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** @return where user-facing futures complete; empty for the default shared pool */
    public Optional<Executor> callbackExecutor() {
        return Optional.ofNullable(callbackExecutor);
    }

    /** @return how long one member may stay silent before a request is sent again or a watch is moved */
    public Duration failoverAfter() {
        return failoverAfter;
    }

    /** @return the least lease validity a grant is handed out with; empty for a third of the granted TTL */
    public Optional<Duration> grantMargin() {
        return Optional.ofNullable(grantMargin);
    }

    /** @return the listeners every session with these options tells of its events, in registration order */
    public List<SessionListener> listeners() {
        return listeners;
    }

    /**
     * @return how long an acquisition of the client waits for a lease while it has none; empty for the
     *     default, the TTL
     */
    public Optional<Duration> ownerWait() {
        return Optional.ofNullable(ownerWait);
    }

    /** @return the client id written into the metadata of every claim; empty by default */
    public String clientId() {
        return clientId;
    }

    /**
     * These options with another lease TTL, everything else alike: for {@link io.disco.client.TestableBackend#withTtl}.
     *
     * @param ttl the lease TTL, as {@link Builder#ttl} takes it
     * @return the options
     * @throws IllegalArgumentException if {@code ttl} is not a valid TTL, or not longer than the grant margin
     */
    EtcdOptions withTtl(Duration ttl) {
        Builder b = builder()
                .ttl(ttl)
                .requestTimeout(requestTimeout)
                .failoverAfter(failoverAfter)
                .clientId(clientId);
        if (callbackExecutor != null) {
            b.callbackExecutor(callbackExecutor);
        }
        if (grantMargin != null) {
            b.grantMargin(grantMargin);
        }
        if (ownerWait != null) {
            b.ownerWait(ownerWait);
        }
        listeners.forEach(b::listener);
        return b.build();
    }

    @Override
    public String toString() {
        return "EtcdOptions{ttl=" + ttl + (clientId.isEmpty() ? "" : ", clientId=" + clientId) + ", requestTimeout="
                + requestTimeout + ", failoverAfter=" + failoverAfter
                + (grantMargin == null ? "" : ", grantMargin=" + grantMargin)
                + (ownerWait == null ? "" : ", ownerWait=" + ownerWait)
                + (callbackExecutor == null ? "" : ", callbackExecutor=" + callbackExecutor) + '}';
    }

    /** Builds {@link EtcdOptions}; every setter validates its argument at once. */
    public static final class Builder {
        private Duration ttl = Duration.ofSeconds(30);
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Executor callbackExecutor;
        private Duration failoverAfter = Duration.ofMillis(150);
        private Duration grantMargin;
        private final List<SessionListener> listeners = new ArrayList<>();
        private String clientId = "";
        private Duration ownerWait;

        private Builder() {}

        /**
         * @param ownerWait how long an acquisition of the client waits for a lease while the client has none
         *        (see the class description), positive; the default is the TTL
         * @return this builder
         * @throws NullPointerException if {@code ownerWait} is null
         * @throws IllegalArgumentException if {@code ownerWait} is zero or negative
         */
        public Builder ownerWait(Duration ownerWait) {
            Objects.requireNonNull(ownerWait, "ownerWait");
            if (ownerWait.isZero() || ownerWait.isNegative()) {
                throw new IllegalArgumentException("ownerWait must be positive, got " + ownerWait);
            }
            this.ownerWait = ownerWait;
            return this;
        }

        /**
         * @param clientId the application's name for itself, written into the metadata of every claim
         *        (see the class description); empty for none; at most 256 characters
         * @return this builder
         * @throws NullPointerException if {@code clientId} is null
         * @throws IllegalArgumentException if {@code clientId} is longer than 256 characters
         */
        public Builder clientId(String clientId) {
            Objects.requireNonNull(clientId, "clientId");
            if (clientId.length() > MAX_CLIENT_ID_LENGTH) {
                throw new IllegalArgumentException("clientId must be at most " + MAX_CLIENT_ID_LENGTH
                        + " characters (it is written into every claim's key), got " + clientId.length());
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
         * @param ttl the lease TTL: a whole number of seconds, at least 1 s
         * @return this builder
         * @throws NullPointerException if {@code ttl} is null
         * @throws IllegalArgumentException if {@code ttl} is under 1 s, not whole seconds, or above etcd's maximum
         */
        public Builder ttl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException(
                        "ttl must be at least 1 s (etcd leases have whole-second TTLs), got " + ttl);
            }
            if (ttl.getNano() != 0) {
                throw new IllegalArgumentException(
                        "ttl must be a whole number of seconds (etcd leases have whole-second TTLs), got " + ttl);
            }
            if (ttl.getSeconds() > MAX_TTL_SECONDS) {
                throw new IllegalArgumentException(
                        "ttl must be at most " + MAX_TTL_SECONDS + " s (etcd's maximum lease TTL), got " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /**
         * @param requestTimeout the deadline of every single request to etcd, positive
         * @return this builder
         * @throws NullPointerException if {@code requestTimeout} is null
         * @throws IllegalArgumentException if {@code requestTimeout} is zero or negative
         */
        public Builder requestTimeout(Duration requestTimeout) {
            Objects.requireNonNull(requestTimeout, "requestTimeout");
            if (requestTimeout.isZero() || requestTimeout.isNegative()) {
                throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /**
         * @param callbackExecutor where user-facing futures complete and their dependent stages run
         *        (see the class description); it should not reject tasks: a rejected task runs on the
         *        default pool
         * @return this builder
         * @throws NullPointerException if {@code callbackExecutor} is null
         */
        public Builder callbackExecutor(Executor callbackExecutor) {
            this.callbackExecutor = Objects.requireNonNull(callbackExecutor, "callbackExecutor");
            return this;
        }

        /**
         * @param failoverAfter how long one etcd member may stay silent before a request is also sent
         *        again (usually to another member) and a watch is moved (see the class description);
         *        positive; a value at least as long as the request timeout turns re-sending off
         * @return this builder
         * @throws NullPointerException if {@code failoverAfter} is null
         * @throws IllegalArgumentException if {@code failoverAfter} is zero or negative
         */
        public Builder failoverAfter(Duration failoverAfter) {
            Objects.requireNonNull(failoverAfter, "failoverAfter");
            if (failoverAfter.isZero() || failoverAfter.isNegative()) {
                throw new IllegalArgumentException("failoverAfter must be positive, got " + failoverAfter);
            }
            this.failoverAfter = failoverAfter;
            return this;
        }

        /**
         * @param grantMargin the least lease validity a grant is handed out with (see the class
         *        description); zero or positive, and shorter than the TTL (checked by {@link #build()})
         * @return this builder
         * @throws NullPointerException if {@code grantMargin} is null
         * @throws IllegalArgumentException if {@code grantMargin} is negative
         */
        public Builder grantMargin(Duration grantMargin) {
            Objects.requireNonNull(grantMargin, "grantMargin");
            if (grantMargin.isNegative()) {
                throw new IllegalArgumentException("grantMargin must not be negative, got " + grantMargin);
            }
            this.grantMargin = grantMargin;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException if the grant margin is not shorter than the TTL
         */
        public EtcdOptions build() {
            return new EtcdOptions(this);
        }
    }
}
