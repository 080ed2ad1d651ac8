package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import io.micrometer.observation.Observation;
import java.util.Objects;
import java.util.Optional;

/**
 * What a disco observation is about: the primitive, its name and, once granted, the grant and its fencing token. The
 * base of the contexts of the two observations {@link DiscoObservations} makes: the wait ({@link DiscoWaitContext})
 * and the hold ({@link DiscoHoldContext}); a convention reads it to name the observation and its key values.
 */
public abstract class DiscoObservationContext extends Observation.Context {

    private final AcquisitionObserver.Kind kind;
    private final String name;
    private volatile Fenced grant;

    DiscoObservationContext(AcquisitionObserver.Kind kind, String name, Fenced grant) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.name = Objects.requireNonNull(name, "name");
        this.grant = grant;
    }

    /** @return what is acquired: a lock, a read or write lock, a semaphore's permit, an election's leadership */
    public AcquisitionObserver.Kind kind() {
        return kind;
    }

    /** @return the name of the lock, read/write lock, semaphore or election, as given to the client */
    public String primitiveName() {
        return name;
    }

    /**
     * @return the grant: a lock's {@link io.disco.lock.Grant}, a read/write lock's {@link io.disco.rwlock.RWGrant}, a
     *     semaphore's {@link io.disco.semaphore.Permit}, an election's {@link io.disco.election.Leadership}; empty while
     *     an acquisition waits, and for one that ended without it
     */
    public Optional<Fenced> grant() {
        return Optional.ofNullable(grant);
    }

    /** @return the grant's fencing token, the one its holder writes with; empty without a grant */
    public Optional<FencingToken> token() {
        Fenced g = grant;
        return g == null ? Optional.empty() : Optional.of(g.token());
    }

    void grant(Fenced grant) {
        this.grant = grant;
    }
}
