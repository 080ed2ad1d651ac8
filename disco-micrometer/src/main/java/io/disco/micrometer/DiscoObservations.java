package io.disco.micrometer;

import io.disco.client.AcquisitionObserver;
import io.disco.fencing.Fenced;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import java.util.Objects;

/**
 * A disco client's acquisitions and holds as Micrometer {@link Observation}s, the API Spring Boot uses for metrics
 * and tracing at once: give it to the client ({@code DiscoOptions.builder().observer(DiscoObservations.of(registry))},
 * or let the Spring Boot starter give it Boot's registry), and a request's trace shows where it waited for a lock and
 * with which token it then held it.
 *
 * <ul>
 *   <li>{@code disco.wait} ({@link DiscoObservationDocumentation#WAIT}): one per acquisition, started on the calling
 *       thread, so that the observation current there (the HTTP request's) is its parent, also for {@code lockAsync()},
 *       {@code acquireAsync()} and {@code campaignAsync()}; stopped when it ends: {@code disco.outcome} acquired, busy
 *       (a try), timed_out, interrupted, cancelled or failed (the error). Once granted it carries the token.</li>
 *   <li>{@code disco.hold} ({@link DiscoObservationDocumentation#HOLD}): one per grant, from the grant to the release
 *       ({@code disco.outcome} released) or the loss (lost, with the loss as its error); a sibling of the wait, under
 *       the same parent, with the token from its start. It is not made current (no scope is opened on the holder's
 *       thread): the holder's own work stays a child of its request, beside the two. A loss is stopped on the
 *       backend's callback executor, never on a thread that keeps the owner alive.</li>
 * </ul>
 * The key values are those of {@link DefaultDiscoWaitObservationConvention} and
 * {@link DefaultDiscoHoldObservationConvention}: the primitive and the outcome are low-cardinality, the name, token,
 * key (and a permit's slot) high-cardinality (the name too, since names may be unbounded, as {@link DiscoMetrics}
 * treats them). Change them with {@link #withWaitConvention} and {@link #withHoldConvention}, or with global
 * conventions registered on the registry. Thread-safe and immutable.
 */
public final class DiscoObservations implements AcquisitionObserver {

    private final ObservationRegistry registry;
    /** The wait's convention, or null for the registry's global one or the default. */
    private final DiscoWaitObservationConvention waitConvention;
    /** The hold's convention, or null for the registry's global one or the default. */
    private final DiscoHoldObservationConvention holdConvention;

    private DiscoObservations(
            ObservationRegistry registry,
            DiscoWaitObservationConvention waitConvention,
            DiscoHoldObservationConvention holdConvention) {
        this.registry = registry;
        this.waitConvention = waitConvention;
        this.holdConvention = holdConvention;
    }

    /**
     * @param registry where the observations go (Spring Boot's, for its meters and traces)
     * @return the observer, with the default conventions
     * @throws NullPointerException if {@code registry} is null
     */
    public static DiscoObservations of(ObservationRegistry registry) {
        return new DiscoObservations(Objects.requireNonNull(registry, "registry"), null, null);
    }

    /**
     * @param convention the wait observation's convention, in place of the default
     * @return an observer like this one with it
     * @throws NullPointerException if {@code convention} is null
     */
    public DiscoObservations withWaitConvention(DiscoWaitObservationConvention convention) {
        return new DiscoObservations(registry, Objects.requireNonNull(convention, "convention"), holdConvention);
    }

    /**
     * @param convention the hold observation's convention, in place of the default
     * @return an observer like this one with it
     * @throws NullPointerException if {@code convention} is null
     */
    public DiscoObservations withHoldConvention(DiscoHoldObservationConvention convention) {
        return new DiscoObservations(registry, waitConvention, Objects.requireNonNull(convention, "convention"));
    }

    /** Starts the wait's observation, on the calling thread: the observation current there is its parent. */
    @Override
    public Attempt started(Kind kind, String name) {
        DiscoWaitContext context = new DiscoWaitContext(kind, name);
        Observation observation = DiscoObservationDocumentation.WAIT
                .observation(waitConvention, DefaultDiscoWaitObservationConvention.INSTANCE, () -> context, registry)
                .start();
        return new ObservedAttempt(this, observation, context);
    }

    /** Starts a hold's observation, under the wait's parent (the grant may come on another thread). */
    Hold hold(Kind kind, String name, Fenced grant, ObservationView parent) {
        DiscoHoldContext context = new DiscoHoldContext(kind, name, grant);
        Observation observation = DiscoObservationDocumentation.HOLD.observation(
                holdConvention, DefaultDiscoHoldObservationConvention.INSTANCE, () -> context, registry);
        if (parent instanceof Observation p) {
            observation.parentObservation(p);
        }
        return new ObservedHold(observation.start(), context);
    }

    @Override
    public String toString() {
        return "DiscoObservations[" + registry + "]";
    }
}
