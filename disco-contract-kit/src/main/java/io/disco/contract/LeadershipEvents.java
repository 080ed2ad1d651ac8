package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.disco.election.LeaderTerm;
import io.disco.election.Leadership;
import io.disco.election.LeadershipListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A runner listener that queues the elected and revoked events, for a test to await in order. */
public final class LeadershipEvents implements LeadershipListener {

    /**
     * One event of a runner.
     *
     * @param term  the term elected or ended
     * @param end   how the term ended; null for an election
     * @param cause the cause of a loss or failure, or null
     * @param nanos {@link System#nanoTime()} when the listener was called
     */
    public record Event(Leadership term, LeaderTerm.End end, Throwable cause, long nanos) {}

    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final List<String> leaders = new CopyOnWriteArrayList<>();

    /** Creates a listener with no events yet. */
    public LeadershipEvents() {}

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

    /**
     * The values of the leaders the runner's observation reported, in order.
     *
     * @return a live, thread-safe view
     */
    public List<String> leaders() {
        return leaders;
    }

    /**
     * The next event within {@code seconds}; fails the test if none came.
     *
     * @param seconds how long to wait
     * @return the event
     * @throws InterruptedException if interrupted while waiting
     */
    public Event next(long seconds) throws InterruptedException {
        Event e = events.poll(seconds, TimeUnit.SECONDS);
        assertNotNull(e, "no runner event within " + seconds + " s");
        return e;
    }

    /**
     * The next event, which must be an election.
     *
     * @param seconds how long to wait
     * @return the elected term
     * @throws InterruptedException if interrupted while waiting
     */
    public Leadership elected(long seconds) throws InterruptedException {
        Event e = next(seconds);
        if (e.end() != null) {
            throw new AssertionError("expected an election, got " + e);
        }
        return e.term();
    }

    /**
     * The next event, which must be a revocation.
     *
     * @param seconds how long to wait
     * @return the event
     * @throws InterruptedException if interrupted while waiting
     */
    public Event revoked(long seconds) throws InterruptedException {
        Event e = next(seconds);
        if (e.end() == null) {
            throw new AssertionError("expected a revocation, got " + e);
        }
        return e;
    }
}
