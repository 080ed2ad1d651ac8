package io.disco.client;

import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's owner of the moment in the backend ({@link DiscoBackend.Owner}: for etcd, one lease) and the
 * client's life: one owner at a time, opened at the start, replaced after a loss (at once, then with a backoff
 * of 100 ms doubling up to 1 s, jittered), waited for by acquisitions at most the owner wait
 * ({@link DiscoBackend#ownerWait()}: then {@link BackendUnavailableException}), and ended with the client; it
 * stops the client for good when the application closed the backend's client first
 * ({@link DiscoBackend#clientClosed()}). Its threads (two daemons, running no user code) open owners, end the
 * waits at the owner wait, and run the client's periodic tasks ({@link #repeat}).
 *
 * <p>Entries get {@link #owner()} as a supplier and handles {@link #requireOpen()}: neither knows this class.
 */
final class CurrentOwner {

    private static final Logger LOG = LoggerFactory.getLogger(CurrentOwner.class);
    static final long FIRST_BACKOFF_MILLIS = 100;
    /**
     * The longest pause between two attempts to open an owner. An attempt against a backend that does not
     * answer lasts up to the request timeout, and the backend's connection is tried again within it, so
     * the client is up within about this long of the backend answering again.
     */
    static final long MAX_BACKOFF_MILLIS = 1_000;
    /** How often, at most, a healing client says at INFO that it still has no owner. */
    static final long STILL_HEALING_LOG_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final DiscoBackend backend;
    /** How long an acquisition waits for an owner while there is none ({@link DiscoBackend#ownerWait()}). */
    private final long ownerWaitNanos;
    /**
     * Opens owners after a loss (one attempt at a time), runs the client's periodic tasks and ends the waits for
     * an owner at the owner wait; two threads, so that an attempt blocked on the backend delays neither. No user
     * code runs on them.
     */
    private final ScheduledExecutorService reopener;
    /** Run once when the client stops (closed, or its backend's client closed first), after these threads are. */
    private final Runnable stopped;
    /** Guards the fields below; never held while calling the backend. */
    private final ReentrantLock lock = new ReentrantLock();
    /** The current owner, or the pending replacement of a lost one. */
    private CompletableFuture<DiscoBackend.Owner> owner;

    private DiscoBackend.Owner alive;
    /** A lost owner not yet closed: closed once its replacement is open, or with the client. */
    private DiscoBackend.Owner lostOwner;

    private boolean closed;
    /** The last loss of an owner or failure to open one, for {@link #status}; null while none. */
    private String lastProblem;
    /**
     * Why the client stopped by itself: the application closed the backend's client before it
     * ({@link DiscoBackend#clientClosed()}); null otherwise. Set once, with {@link #closed}.
     */
    private String clientClosed;
    /** While there is no owner: since when ({@code System.nanoTime()}), and which outage this is. */
    private long ownerlessSince;

    private long outage;
    /** Whether this outage has lasted longer than the owner wait: acquisitions then fail at once. */
    private boolean waitsExpired;
    /** Failed attempts to open an owner in this outage, and when the last INFO about them was logged. */
    private int failedAttempts;

    private long attemptsLoggedAt;

    /**
     * Opens the first owner.
     *
     * @param failFast whether a first owner that cannot be opened fails the constructor; if not, the
     *     client starts healing (see {@link Disco#healing})
     * @param stopped run once when the client stops, on the thread that stops it
     */
    CurrentOwner(DiscoBackend backend, boolean failFast, Runnable stopped) {
        this.backend = backend;
        this.stopped = stopped;
        Duration wait = Objects.requireNonNull(backend.ownerWait(), "backend.ownerWait()");
        if (wait.isZero() || wait.isNegative()) {
            throw new IllegalArgumentException("the backend's owner wait must be positive, got " + wait);
        }
        this.ownerWaitNanos = wait.toNanos();
        DiscoBackend.Owner first;
        RuntimeException firstFailure = null;
        if (failFast) {
            first = backend.open();
        } else {
            try {
                first = backend.open();
            } catch (RuntimeException e) {
                first = null;
                firstFailure = e;
            }
        }
        this.reopener = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "disco-client");
            t.setDaemon(true);
            return t;
        });
        lock.lock();
        try {
            if (first != null) {
                install(first);
            } else {
                LOG.warn(
                        "disco client on {} could not open its first owner ({}); it starts healing: acquisitions wait"
                                + " for one at most {} ms",
                        backend.describe(),
                        firstFailure.getMessage(),
                        TimeUnit.NANOSECONDS.toMillis(ownerWaitNanos));
                startOutage("no owner opened yet: " + firstFailure.getMessage());
                failedAttempts = 1;
                attemptsLoggedAt = System.nanoTime();
                reopener.schedule(
                        () -> reopen(null, FIRST_BACKOFF_MILLIS * 2), FIRST_BACKOFF_MILLIS, TimeUnit.MILLISECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code task} every {@code periodNanos} on the client's threads, until the client stops. */
    void repeat(Runnable task, long periodNanos) {
        reopener.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /** @return the backend, as its messages name it */
    String describe() {
        return backend.describe();
    }

    /** @throws IllegalStateException if the client is closed, or stopped because its backend's client was closed first */
    void requireOpen() {
        checkClientClosed();
        lock.lock();
        try {
            if (closed) {
                throw closedException();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Why the client cannot be used any more: closed by the application, or its backend's client closed first. */
    IllegalStateException closedException() {
        if (!lock.isHeldByCurrentThread()) {
            lock.lock();
            try {
                return closedException();
            } finally {
                lock.unlock();
            }
        }
        return new IllegalStateException(
                clientClosed == null ? this + " is closed" : this + " cannot be used: " + clientClosed);
    }

    /** An acquisition waited for an owner for longer than the owner wait, or started after it passed. */
    private BackendUnavailableException unavailable() {
        assert lock.isHeldByCurrentThread();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ownerlessSince);
        return new BackendUnavailableException("the client has had no owner in " + backend.describe() + " for " + ms
                + " ms, longer than its owner wait of " + TimeUnit.NANOSECONDS.toMillis(ownerWaitNanos) + " ms ("
                + (lastProblem == null ? "no reason known yet" : lastProblem) + "); it keeps trying, and acquisitions"
                + " succeed again once it has one");
    }

    /**
     * The client has no owner from now on: acquisitions wait for the pending one at most the owner wait,
     * after which they, and those that start later, fail until an owner is installed.
     */
    private void startOutage(String problem) {
        assert lock.isHeldByCurrentThread();
        alive = null;
        owner = new CompletableFuture<>();
        lastProblem = problem;
        ownerlessSince = System.nanoTime();
        waitsExpired = false;
        failedAttempts = 0;
        long which = ++outage;
        try {
            reopener.schedule(() -> expireWaits(which), ownerWaitNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    /** On the reopener, at the owner wait after the outage began: the acquisitions that wait for an owner give up. */
    private void expireWaits(long which) {
        CompletableFuture<DiscoBackend.Owner> waiting;
        BackendUnavailableException failure;
        lock.lock();
        try {
            if (closed || outage != which || alive != null) {
                return;
            }
            waitsExpired = true;
            waiting = owner;
            owner = new CompletableFuture<>(); // completed by the next owner; nobody waits on it while expired
            failure = unavailable();
        } finally {
            lock.unlock();
        }
        LOG.warn("disco client on {}: {}", backend.describe(), failure.getMessage());
        waiting.completeExceptionally(failure);
    }

    /** Stops the client for good if the application closed the backend's client first. */
    private void checkClientClosed() {
        Optional<String> why = backend.clientClosed();
        if (why.isPresent()) {
            stopForClosedClient(why.get());
        }
    }

    /**
     * Makes {@code o} the current owner; returns the pending future to complete with it, which the
     * caller completes after releasing {@link #lock} (its dependents make services).
     */
    private CompletableFuture<DiscoBackend.Owner> install(DiscoBackend.Owner o) {
        assert lock.isHeldByCurrentThread();
        alive = o;
        waitsExpired = false;
        CompletableFuture<DiscoBackend.Owner> pending = owner;
        owner = CompletableFuture.completedFuture(o);
        o.done().thenRun(() -> ended(o));
        return pending;
    }

    /**
     * The current owner, or the replacement of a lost one once it is open; fails with
     * {@link IllegalStateException} once the client is closed.
     */
    CompletableFuture<DiscoBackend.Owner> owner() {
        checkClientClosed();
        DiscoBackend.Owner lost = null;
        lock.lock();
        try {
            if (closed) {
                return CompletableFuture.failedFuture(closedException());
            }
            if (alive != null && alive.err().isPresent()) { // lost, and its done() not handled yet
                lost = alive;
            } else if (alive == null && waitsExpired) {
                return CompletableFuture.failedFuture(unavailable());
            } else {
                return owner;
            }
        } finally {
            lock.unlock();
        }
        ended(lost);
        return owner();
    }

    /** The owner finished: after a loss, open a new one at once and then with backoff. */
    private void ended(DiscoBackend.Owner o) {
        Optional<String> clientGone = backend.clientClosed();
        if (clientGone.isPresent()) {
            stopForClosedClient(clientGone.get()); // no new owner can be opened: no retry loop
            return;
        }
        lock.lock();
        try {
            if (closed || alive != o || o.err().isEmpty()) {
                return;
            }
            LOG.warn(
                    "disco client on {} lost its owner ({}); opening a new one",
                    backend.describe(),
                    o.err().get().getMessage());
            startOutage("owner " + o.id() + " lost: " + o.err().get().getMessage());
            lostOwner = o;
            reopener.execute(() -> reopen(o, FIRST_BACKOFF_MILLIS));
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        } finally {
            lock.unlock();
        }
    }

    /** On the reopener: one attempt; a failure schedules the next one after {@code backoff}. */
    private void reopen(DiscoBackend.Owner lost, long backoff) {
        DiscoBackend.Owner next;
        try {
            next = backend.open();
        } catch (RuntimeException e) {
            Optional<String> clientGone = backend.clientClosed();
            if (clientGone.isPresent()) {
                stopForClosedClient(clientGone.get());
                return;
            }
            long delay = jittered(backoff);
            boolean tell;
            int attempts;
            long ownerless;
            lock.lock();
            try {
                if (closed) {
                    return;
                }
                lastProblem = (lost == null ? "no owner opened yet: " : "no new owner opened yet: ") + e.getMessage();
                attempts = ++failedAttempts;
                long now = System.nanoTime();
                ownerless = now - ownerlessSince;
                tell = attempts == 1 || now - attemptsLoggedAt >= STILL_HEALING_LOG_NANOS;
                if (tell) {
                    attemptsLoggedAt = now;
                }
            } finally {
                lock.unlock();
            }
            if (tell) {
                LOG.info(
                        "disco client on {} could not open {} owner ({} attempt(s), {} ms without one): {}; it tries again"
                                + " every {} ms at most",
                        backend.describe(),
                        lost == null ? "an" : "a new",
                        attempts,
                        TimeUnit.NANOSECONDS.toMillis(ownerless),
                        e.getMessage(),
                        MAX_BACKOFF_MILLIS);
            } else {
                LOG.debug(
                        "disco client on {} could not open an owner: {}; next attempt in {} ms",
                        backend.describe(),
                        e.getMessage(),
                        delay);
            }
            try {
                reopener.schedule(
                        () -> reopen(lost, Math.min(MAX_BACKOFF_MILLIS, backoff * 2)), delay, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closing) {
                // closed meanwhile
            }
            return;
        }
        CompletableFuture<DiscoBackend.Owner> waiting = null;
        long ownerless = 0;
        lock.lock();
        try {
            if (!closed) {
                ownerless = System.nanoTime() - ownerlessSince;
                waiting = install(next);
                lostOwner = null;
            }
        } finally {
            lock.unlock();
        }
        if (waiting != null) {
            LOG.info(
                    "disco client on {} has an owner again, {}, after being without one for {} ms ({})",
                    backend.describe(),
                    next.describe(),
                    TimeUnit.NANOSECONDS.toMillis(ownerless),
                    lost == null ? "since it started" : "since " + lost.describe() + " was lost");
            waiting.complete(next); // the acquisitions that waited for an owner go on, on this thread
        } else {
            next.close();
            return; // close() ends the lost owner
        }
        // The backend answers again: end the lost owner there too (for etcd: revoke the lease, whose
        // keys a restarted cluster may still hold), so that nothing of it is left in anybody's way.
        if (lost != null) {
            lost.close();
        }
    }

    /**
     * The owner to read the backend through: the live one, or a lost one not closed yet (a lost owner still reads).
     *
     * @throws IllegalStateException if the client is closed
     * @throws DiscoException if there is none right now
     */
    DiscoBackend.Owner forReading() {
        checkClientClosed();
        DiscoBackend.Owner o;
        lock.lock();
        try {
            if (closed) {
                throw closedException();
            }
            o = alive != null ? alive : lostOwner; // a lost owner still reads
        } finally {
            lock.unlock();
        }
        if (o == null) {
            throw new DiscoException("the client has no owner in " + backend.describe()
                    + " right now (it is opening a new one after a loss)");
        }
        return o;
    }

    /**
     * @param namesInUse how many names the client keeps anything for
     * @return the client's status now: local, cheap
     */
    DiscoStatus status(IntSupplier namesInUse) {
        checkClientClosed();
        DiscoBackend.Owner o;
        String problem;
        lock.lock();
        try {
            if (closed) {
                return new DiscoStatus(
                        DiscoStatus.State.CLOSED,
                        Optional.empty(),
                        Duration.ZERO,
                        Duration.ZERO,
                        Optional.ofNullable(lastProblem),
                        0);
            }
            o = alive;
            problem = lastProblem;
        } finally {
            lock.unlock();
        }
        int names = namesInUse.getAsInt();
        if (o == null || o.err().isPresent()) {
            String why = o == null
                    ? problem
                    : "owner " + o.id() + " lost: " + o.err().get().getMessage();
            return new DiscoStatus(
                    DiscoStatus.State.HEALING,
                    Optional.empty(),
                    Duration.ZERO,
                    Duration.ZERO,
                    Optional.ofNullable(why),
                    names);
        }
        return new DiscoStatus(
                DiscoStatus.State.UP,
                Optional.of(o.id()),
                o.ttl(),
                o.remainingValidity(),
                Optional.ofNullable(problem),
                names);
    }

    /** @return whether the client is closed (or stopped because its backend's client was closed first) */
    boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** The application's close: ends the owner (for etcd: revokes the lease), once. */
    void close() {
        shutDown(null);
    }

    /**
     * The application closed the backend's client before this client: nothing can be kept or opened any
     * more. Stops for good, as {@link #close()} does, with the reason: the status says CLOSED with it, every
     * operation throws {@link IllegalStateException} saying it, and nothing retries. Holds made through the
     * owner report their loss (the backend's owner reports it as lost).
     */
    private void stopForClosedClient(String reason) {
        if (shutDown(reason)) {
            LOG.warn(
                    "disco client on {}: {}; it stops: what it held is lost (and stays in the backend until its owner's"
                            + " TTL runs out, since it cannot be released), and every operation throws IllegalStateException."
                            + " Close the Disco first, then the backend's client",
                    backend.describe(),
                    reason);
        }
    }

    /** Closes, once; {@code clientClosedReason} is null for the application's {@link #close()}. @return whether this call closed it */
    private boolean shutDown(String clientClosedReason) {
        CompletableFuture<DiscoBackend.Owner> o;
        DiscoBackend.Owner lost;
        IllegalStateException failure;
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            if (clientClosedReason != null) {
                clientClosed = clientClosedReason;
                lastProblem = clientClosedReason;
            }
            failure = closedException();
            o = owner;
            lost = lostOwner;
            lostOwner = null;
        } finally {
            lock.unlock();
        }
        reopener.shutdownNow();
        stopped.run(); // the client's leadership runners signalled, its idle names dropped; the owner's end below ends
        // what is held
        if (lost != null) {
            lost.close();
        }
        if (o.isDone() && !o.isCompletedExceptionally()) {
            o.join().close();
        } else {
            o.completeExceptionally(failure);
        }
        return true;
    }

    /** A backoff with up to a fifth taken off at random, so that the clients of many processes do not retry in step. */
    private static long jittered(long backoff) {
        return backoff - ThreadLocalRandom.current().nextLong(backoff / 5 + 1);
    }

    /** @return the client, as the messages name it */
    @Override
    public String toString() {
        return "Disco[" + backend.describe() + "]";
    }
}
