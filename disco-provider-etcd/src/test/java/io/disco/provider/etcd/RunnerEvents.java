package io.disco.provider.etcd;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipListener;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A listener that queues a runner's elected and revoked events, for tests to await in order. */
final class RunnerEvents implements LeadershipListener {

    /** One event: {@code end} is null for an election. */
    record Event(Leadership term, LeaderTerm.End end, Throwable cause, long nanos) {
    }

    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    /** The values of the leaders this runner's observation reported, in order. */
    final java.util.List<String> leaders = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void leaderChanged(Leadership leader) {
        leaders.add(leader.value());
    }

    @Override
    public void elected(Leadership term) {
        events.add(new Event(term, null, null, System.nanoTime()));
    }

    @Override
    public void revoked(Leadership term, LeaderTerm.End end, Throwable cause) {
        events.add(new Event(term, end, cause, System.nanoTime()));
    }

    /** The next event within {@code seconds}; fails the test if none came. */
    Event next(long seconds) throws InterruptedException {
        Event e = events.poll(seconds, TimeUnit.SECONDS);
        assertNotNull(e, "no runner event within " + seconds + " s");
        return e;
    }

    /** The next event, which must be an election. */
    Leadership elected(long seconds) throws InterruptedException {
        Event e = next(seconds);
        if (e.end() != null) {
            throw new AssertionError("expected an election, got " + e);
        }
        return e.term();
    }

    /** The next event, which must be a revocation. */
    Event revoked(long seconds) throws InterruptedException {
        Event e = next(seconds);
        if (e.end() == null) {
            throw new AssertionError("expected a revocation, got " + e);
        }
        return e;
    }
}
