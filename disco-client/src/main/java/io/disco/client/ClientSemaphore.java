package io.disco.client;

import io.disco.fencing.Timeouts;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;

/**
 * The handle {@link Disco#semaphore(String, int)} returns: a name, a limit and the client's semaphore entries of
 * that limit. Every acquisition joins the name's {@link SemaphoreEntry} (making it if the name was idle), which
 * acquires, and the end of every hold (a release, a loss reported by the release, an acquisition that gives up)
 * leaves it, so the entry lives exactly as long as somebody holds or waits. Every acquisition starts its
 * {@link AttemptWatch} here, on the calling thread (for {@link #acquireAsync()} too), and ends it here when it is
 * not granted; the entry tells it the permit.
 */
final class ClientSemaphore implements FencedSemaphore {

    private final String name;
    private final int permits;
    /** The client's semaphore entries, made with this handle's limit. */
    private final Entries<SemaphoreEntry> entries;

    private final Observers observers;

    /**
     * @throws IllegalArgumentException if {@code permits} is not positive, or this client holds or waits on the
     *     name with another limit
     */
    ClientSemaphore(String name, int permits, Entries<SemaphoreEntry> entries) {
        this.name = name;
        this.permits = checkPermits(permits);
        this.entries = entries;
        this.observers = entries.observers();
        SemaphoreEntry inUse = entries.inUse(name);
        if (inUse != null && inUse.permits != permits) {
            throw otherLimit(inUse.permits);
        }
    }

    /**
     * @throws IllegalArgumentException if {@code permits} is not positive
     */
    static int checkPermits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, got " + permits);
        }
        return permits;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    /** Joins the entry; refuses (and leaves) when this client uses the name with another limit. */
    private SemaphoreEntry join() {
        SemaphoreEntry e = entries.join(name, idle -> idle.permits == permits);
        if (e.permits != permits) {
            entries.leave(e);
            throw otherLimit(e.permits);
        }
        return e;
    }

    private IllegalArgumentException otherLimit(int inUse) {
        return new IllegalArgumentException("semaphore '" + name + "' is in use by this client with " + inUse
                + " permits; this handle asks for " + permits + ": every holder of one name must use one limit");
    }

    /** @return the permit, or null if not acquired (try only); the acquisition is watched until it ends */
    private Permit acquire(Wait wait, long deadline) throws InterruptedException, TimeoutException {
        AttemptWatch watch = observers.start(AcquisitionObserver.Kind.SEMAPHORE, name);
        Permit p = null;
        try {
            SemaphoreEntry e = join();
            try {
                p = e.acquire(wait, deadline, watch);
                return p;
            } finally {
                if (p == null) {
                    entries.leave(e);
                }
            }
        } catch (TimeoutException e) {
            watch.ended(
                    wait == Wait.NOT_AT_ALL ? AcquisitionObserver.Outcome.BUSY : AcquisitionObserver.Outcome.TIMED_OUT,
                    null);
            throw e;
        } catch (Throwable e) {
            watch.threw(e);
            throw e;
        } finally {
            if (p == null) {
                watch.ended(AcquisitionObserver.Outcome.BUSY, null); // a try found none free (told already otherwise)
            }
        }
    }

    /** As {@code java.util.concurrent.Semaphore}: an interrupted thread claims nothing (nor records the limit). */
    private void refuseInterrupted(String call) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    "semaphore '" + name + "': " + call + " on an interrupted thread; nothing was claimed");
        }
    }

    @Override
    public Permit acquire() throws InterruptedException {
        refuseInterrupted("acquire()");
        try {
            return acquire(Wait.INTERRUPTIBLY, Long.MAX_VALUE);
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Permit acquire(Duration timeout) throws InterruptedException, TimeoutException {
        long nanos = Timeouts.nanos(timeout); // null: to wait without a limit, call acquire()
        refuseInterrupted("acquire(timeout)");
        if (nanos == 0) { // zero or less: one try, at once
            Permit p = acquire(Wait.NOT_AT_ALL, 0);
            if (p == null) {
                throw new TimeoutException("semaphore '" + name + "': no permit free now (a timeout of " + timeout
                        + " is one try, at once); the claim was withdrawn");
            }
            return p;
        }
        if (nanos == Long.MAX_VALUE) {
            return acquire(Wait.INTERRUPTIBLY, Long.MAX_VALUE); // too long to count: no limit
        }
        long deadline = System.nanoTime() + nanos; // compared by difference; Long.MAX_VALUE would mean no limit
        return acquire(Wait.INTERRUPTIBLY, deadline == Long.MAX_VALUE ? deadline - 1 : deadline);
    }

    @Override
    public Optional<Permit> tryAcquire() {
        try {
            return Optional.ofNullable(acquire(Wait.NOT_AT_ALL, 0));
        } catch (InterruptedException | TimeoutException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return Optional.empty(); // no owner right now: nothing free now
        }
    }

    @Override
    public CompletableFuture<Permit> acquireAsync() {
        AttemptWatch watch = observers.start(AcquisitionObserver.Kind.SEMAPHORE, name);
        SemaphoreEntry e;
        try {
            e = join();
        } catch (RuntimeException | Error x) {
            watch.threw(x);
            throw x;
        }
        CompletableFuture<Permit> out = new CompletableFuture<>();
        out.whenComplete((p, x) -> {
            if (x != null) {
                watch.failed(x); // cancelled, or failed (a grant has told it already)
                entries.leave(e);
            }
        });
        e.acquireAsync(out, watch);
        return out;
    }

    /** The entry that holds {@code permit}. */
    private SemaphoreEntry holding(Permit permit) {
        Objects.requireNonNull(permit, "permit");
        SemaphoreEntry e = entries.get(name);
        if (e == null || !e.holds(permit)) {
            throw new IllegalArgumentException(permit + " is not held through this client on semaphore '" + name
                    + "' (released already, or acquired elsewhere)");
        }
        return e;
    }

    @Override
    public void release(Permit permit) {
        SemaphoreEntry e = holding(permit);
        boolean ended = false;
        try {
            e.release(permit);
            ended = true;
        } catch (SemaphoreLostException lost) {
            ended = true;
            throw lost;
        } finally {
            if (ended) {
                entries.leave(e);
            }
        }
    }

    @Override
    public CompletionStage<Void> done(Permit permit) {
        return holding(permit).done(permit);
    }

    @Override
    public Optional<SemaphoreLostException> err(Permit permit) {
        return holding(permit).err(permit);
    }

    @Override
    public String toString() {
        return "FencedSemaphore[semaphore '" + name + "' of " + permits + " permits, " + entries + "]";
    }
}
