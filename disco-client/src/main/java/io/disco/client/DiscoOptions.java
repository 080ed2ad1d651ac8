package io.disco.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The backend-neutral options of a {@link Disco} client ({@link Disco#over(DiscoBackend, DiscoOptions)},
 * {@link Disco#healing(DiscoBackend, DiscoOptions)}, and a provider's shortcuts such as
 * {@code EtcdProvider.disco(client, etcdOptions, discoOptions)}); what is the backend's own (for etcd the lease's
 * TTL, the session listeners) is in the backend's options. Immutable.
 *
 * <pre>{@code
 * Disco disco = EtcdProvider.disco(client, EtcdOptions.defaults(),
 *         DiscoOptions.builder().observer(DiscoObservations.of(observationRegistry)).build());
 * }</pre>
 */
public final class DiscoOptions {

    private static final DiscoOptions DEFAULTS = new DiscoOptions(List.of());

    private final List<AcquisitionObserver> observers;

    private DiscoOptions(List<AcquisitionObserver> observers) {
        this.observers = observers;
    }

    /** @return the options of a client without observers */
    public static DiscoOptions defaults() {
        return DEFAULTS;
    }

    /** @return a builder, starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the observers of every acquisition and hold, in the order they are told; empty by default */
    public List<AcquisitionObserver> observers() {
        return observers;
    }

    @Override
    public String toString() {
        return "DiscoOptions{observers=" + observers + '}';
    }

    /** Builds {@link DiscoOptions}. */
    public static final class Builder {

        private final List<AcquisitionObserver> observers = new ArrayList<>();

        private Builder() {}

        /**
         * Adds an observer of every acquisition and hold of the client (see {@link AcquisitionObserver}); each one
         * added is told, in the order added.
         *
         * @param observer the observer
         * @return this builder
         * @throws NullPointerException if {@code observer} is null
         */
        public Builder observer(AcquisitionObserver observer) {
            observers.add(Objects.requireNonNull(observer, "observer"));
            return this;
        }

        /** @return the options */
        public DiscoOptions build() {
            return observers.isEmpty() ? DEFAULTS : new DiscoOptions(List.copyOf(observers));
        }
    }
}
