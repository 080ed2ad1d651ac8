package io.disco.provider.zookeeper;

import java.time.Duration;
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

    private ZooKeeperOptions(Builder b) {
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.callbackExecutor = b.callbackExecutor;
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

    /** Builds {@link ZooKeeperOptions}. */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(15);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Executor callbackExecutor;

        private Builder() {
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
