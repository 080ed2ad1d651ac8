package io.disco.provider.etcd;

import java.time.Duration;
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
 * </ul>
 */
public final class EtcdOptions {

    /** etcd's largest lease TTL (server constant {@code MaxLeaseTTL}). */
    static final long MAX_TTL_SECONDS = 9_000_000_000L;

    private static final EtcdOptions DEFAULTS = builder().build();

    private final Duration ttl;
    private final Duration requestTimeout;
    private final Executor callbackExecutor;

    private EtcdOptions(Builder b) {
        this.ttl = b.ttl;
        this.requestTimeout = b.requestTimeout;
        this.callbackExecutor = b.callbackExecutor;
    }

    /** Null arguments are bad input like any other: an {@link IllegalArgumentException} naming the argument. */
    static <T> T requireArgument(T value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        return value;
    }

    /** @return the defaults: TTL 30 s, request timeout 5 s */
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

    @Override
    public String toString() {
        return "EtcdOptions{ttl=" + ttl + ", requestTimeout=" + requestTimeout
                + (callbackExecutor == null ? "" : ", callbackExecutor=" + callbackExecutor) + '}';
    }

    /** Builds {@link EtcdOptions}; every setter validates its argument at once. */
    public static final class Builder {
        private Duration ttl = Duration.ofSeconds(30);
        private Duration requestTimeout = Duration.ofSeconds(5);
        private Executor callbackExecutor;

        private Builder() {
        }

        /**
         * @param ttl the lease TTL: a whole number of seconds, at least 1 s
         * @return this builder
         * @throws IllegalArgumentException if {@code ttl} is null, under 1 s, not whole seconds, or above etcd's maximum
         */
        public Builder ttl(Duration ttl) {
            EtcdOptions.requireArgument(ttl, "ttl");
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("ttl must be at least 1 s (etcd leases have whole-second TTLs), got " + ttl);
            }
            if (ttl.getNano() != 0) {
                throw new IllegalArgumentException("ttl must be a whole number of seconds (etcd leases have whole-second TTLs), got " + ttl);
            }
            if (ttl.getSeconds() > MAX_TTL_SECONDS) {
                throw new IllegalArgumentException("ttl must be at most " + MAX_TTL_SECONDS + " s (etcd's maximum lease TTL), got " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /**
         * @param requestTimeout the deadline of every single request to etcd, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code requestTimeout} is null, zero or negative
         */
        public Builder requestTimeout(Duration requestTimeout) {
            EtcdOptions.requireArgument(requestTimeout, "requestTimeout");
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
         * @throws IllegalArgumentException if {@code callbackExecutor} is null
         */
        public Builder callbackExecutor(Executor callbackExecutor) {
            this.callbackExecutor = EtcdOptions.requireArgument(callbackExecutor, "callbackExecutor");
            return this;
        }

        /** @return the options */
        public EtcdOptions build() {
            return new EtcdOptions(this);
        }
    }
}
