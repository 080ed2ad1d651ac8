package io.disco.micrometer;

import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.GuardListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer meters for disco: register it as a session listener, with any provider
 * (etcd: {@code EtcdOptions.builder().listener(metrics)}; ZooKeeper:
 * {@code ZooKeeperOptions.builder().listener(metrics)}: the same meters, a renewal being the session's liveness
 * request and the lease its session) and as a guard listener
 * ({@code Guard.builder().listener(metrics.guard("orders"))}).
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th></tr>
 *   <tr><td>{@code disco.acquisitions}</td><td>timer: time from asking to the grant or the failure</td>
 *       <td>{@code primitive} (lock, rwlock, election, semaphore), {@code outcome} (acquired, failed)</td></tr>
 *   <tr><td>{@code disco.holds}</td><td>timer: time a grant was held</td><td>{@code primitive}, {@code outcome} (released, lost)</td></tr>
 *   <tr><td>{@code disco.lease.renewals}</td><td>counter</td><td>{@code outcome} (ok, failed)</td></tr>
 *   <tr><td>{@code disco.lease.losses}</td><td>counter</td><td></td></tr>
 *   <tr><td>{@code disco.lease.remaining}</td><td>gauge, seconds of validity left, per live session</td><td>{@code lease} (id in hex)</td></tr>
 *   <tr><td>{@code disco.guard.requests}</td><td>counter</td><td>{@code resource}, {@code outcome} (accepted, malformed, stale, drain_timeout, store_failed, not_issued, bound_unavailable)</td></tr>
 *   <tr><td>{@code disco.guard.high.water}</td><td>gauge</td><td>{@code resource}</td></tr>
 * </table>
 * Names of locks, elections and semaphores are not tags by default (their number may be unbounded);
 * {@link #withNameTags} adds a {@code name} tag to the acquisition and hold timers.
 */
public final class DiscoMetrics implements SessionListener {

    private final MeterRegistry registry;
    private final boolean nameTags;
    private final Map<Long, Gauge> remaining = new ConcurrentHashMap<>();
    /** Timers by "name|primitive|service name|outcome": registered once, looked up without building ids. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    private final Counter renewalsOk;
    private final Counter renewalsFailed;
    private final Counter losses;

    private DiscoMetrics(MeterRegistry registry, boolean nameTags) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.nameTags = nameTags;
        this.renewalsOk = registry.counter("disco.lease.renewals", "outcome", "ok");
        this.renewalsFailed = registry.counter("disco.lease.renewals", "outcome", "failed");
        this.losses = registry.counter("disco.lease.losses");
    }

    private Timer timer(String meter, String primitive, String name, String outcome) {
        String id = meter + '|' + primitive + '|' + (nameTags ? name : "") + '|' + outcome;
        Timer t = timers.get(id);
        return t != null
                ? t
                : timers.computeIfAbsent(
                        id,
                        k -> Timer.builder(meter)
                                .tags(service(primitive, name, outcome))
                                .register(registry));
    }

    /**
     * @param registry where the meters go
     * @return the binding, without name tags
     */
    public static DiscoMetrics of(MeterRegistry registry) {
        return new DiscoMetrics(registry, false);
    }

    /** @return a binding like this one that also tags acquisitions and holds with the service's name */
    public DiscoMetrics withNameTags() {
        return new DiscoMetrics(registry, true);
    }

    private Tags service(String primitive, String name, String outcome) {
        Tags tags = Tags.of("primitive", primitive, "outcome", outcome);
        return nameTags ? tags.and("name", name) : tags;
    }

    private void sessionSeen(DiscoSession session) {
        remaining.computeIfAbsent(
                session.leaseId(),
                id -> Gauge.builder(
                                "disco.lease.remaining",
                                session,
                                s -> s.remainingValidity().toNanos() / 1e9)
                        .tags("lease", Long.toHexString(id))
                        .baseUnit("seconds")
                        .description("validity left on the lease, on the local clock")
                        .register(registry));
    }

    private void sessionGone(DiscoSession session) {
        Gauge g = remaining.remove(session.leaseId());
        if (g != null) {
            registry.remove(g);
        }
    }

    @Override
    public void renewed(DiscoSession session, Duration left) {
        sessionSeen(session);
        renewalsOk.increment();
    }

    @Override
    public void renewalFailing(DiscoSession session, Duration failingFor, Duration left, Throwable cause) {
        sessionSeen(session);
        renewalsFailed.increment();
    }

    @Override
    public void lost(DiscoSession session, DiscoException cause) {
        losses.increment();
        sessionGone(session);
    }

    @Override
    public void closed(DiscoSession session) {
        sessionGone(session);
    }

    @Override
    public void acquired(
            DiscoSession session, String primitive, String name, String key, FencingToken token, Duration waited) {
        sessionSeen(session);
        timer("disco.acquisitions", primitive, name, "acquired").record(waited);
    }

    @Override
    public void acquisitionFailed(
            DiscoSession session, String primitive, String name, Throwable cause, Duration waited) {
        timer("disco.acquisitions", primitive, name, "failed").record(waited);
    }

    @Override
    public void released(DiscoSession session, String primitive, String name, Duration held) {
        timer("disco.holds", primitive, name, "released").record(held);
    }

    @Override
    public void grantLost(DiscoSession session, String primitive, String name, Throwable cause, Duration held) {
        timer("disco.holds", primitive, name, "lost").record(held);
    }

    /**
     * A guard listener that counts the decisions of the guard(s) of {@code resource}.
     *
     * @param resource the resource's name, a tag value
     * @return the listener, for {@code Guard.builder().listener(...)}
     */
    public GuardListener guard(String resource) {
        Objects.requireNonNull(resource, "resource");
        Map<String, Counter> counters = new ConcurrentHashMap<>();
        java.util.function.Function<String, Counter> counter = outcome -> counters.computeIfAbsent(
                outcome,
                o -> Counter.builder("disco.guard.requests")
                        .tags("resource", resource, "outcome", o)
                        .register(registry));
        Counter accepted = counter.apply("accepted");
        return new GuardListener() {
            @Override
            public void accepted(String key, FencingToken token) {
                accepted.increment();
            }

            @Override
            public void rejected(String key, FencingToken token, Rejection why) {
                counter.apply(why.name().toLowerCase(Locale.ROOT)).increment();
            }
        };
    }

    /**
     * Registers the high-water mark of {@code guard} as a gauge (0 while it has accepted nothing).
     *
     * @param resource the resource's name, a tag value
     * @param guard the guard
     */
    public void highWater(String resource, Guard guard) {
        Gauge.builder(
                        "disco.guard.high.water",
                        guard,
                        g -> g.highWater().map(t -> (double) t.value()).orElse(0.0))
                .tags("resource", resource)
                .register(registry);
    }
}
