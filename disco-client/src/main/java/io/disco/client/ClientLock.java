package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The handle {@link Disco#lock(String)} returns: a name and the client's lock entries. Every acquisition
 * joins the name's {@link LockEntry} (making it if the name was idle) and acquires through its
 * {@link QueuedFencedLock}; every release leaves it, so the entry lives exactly as long as somebody holds or
 * waits. The handle itself holds nothing. It is where the client's observers see a lock's acquisitions: each one
 * that is not reentrant starts its {@link AttemptWatch} here, on the calling thread (for {@link #lockAsync()} too),
 * and ends it here when it is not granted; the queue tells it the grant.
 */
final class ClientLock implements FencedLock {

    private final String name;
    private final Entries<LockEntry> entries;
    /** The maximum hold time of this handle's acquisitions, or null for none. */
    private final Duration maxHold;
    /** {@link #maxHold} in nanoseconds, 0 for none. */
    private final long maxHoldNanos;

    private final Observers observers;

    ClientLock(String name, Entries<LockEntry> entries) {
        this(name, entries, null);
    }

    private ClientLock(String name, Entries<LockEntry> entries, Duration maxHold) {
        this.name = name;
        this.entries = entries;
        this.maxHold = maxHold;
        this.maxHoldNanos = maxHold == null ? 0 : MaxHold.nanos(maxHold);
        this.observers = entries.observers();
    }

    /**
     * @return the watch of an acquisition by this thread: {@link AttemptWatch#OFF} without observers, and for a
     *     reentrant one (it holds nothing new)
     */
    private AttemptWatch watch() {
        return !observers.on() || isHeldByCurrentThread()
                ? AttemptWatch.OFF
                : observers.start(AcquisitionObserver.Kind.LOCK, name);
    }

    @Override
    public FencedLock withMaxHold(Duration maxHold) {
        MaxHold.nanos(maxHold); // checks it
        return new ClientLock(name, entries, maxHold);
    }

    @Override
    public CompletableFuture<Held<FencedHold>> lockAsync() {
        // started here, on the caller's thread; the acquisition's own thread is new, so never reentrant
        AttemptWatch watch = observers.start(AcquisitionObserver.Kind.LOCK, name);
        return AsyncAcquisition.start(this, watch, () -> lockInterruptibly(watch));
    }

    /** The entry, if this thread holds the lock. */
    private LockEntry held() {
        LockEntry e = entries.get(name);
        return e != null && e.queue.isHeldByCurrentThread() ? e : null;
    }

    private LockEntry requireHeld() {
        LockEntry e = held();
        if (e == null) {
            throw new IllegalMonitorStateException("this thread does not hold lock '" + name + "'");
        }
        return e;
    }

    // Each acquisition ends its watch here when it is not granted (it returns false, or throws): a lambda for the
    // entry's acquisition, as before, and none more, so that a client without observers allocates nothing for them.

    @Override
    public void lock() {
        AttemptWatch watch = watch();
        try {
            entries.acquire(name, e -> {
                e.queue.lock(maxHoldNanos, watch);
                return true;
            });
        } catch (Throwable x) {
            watch.threw(x);
            throw x;
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInterruptibly(watch());
    }

    private void lockInterruptibly(AttemptWatch watch) throws InterruptedException {
        try {
            entries.acquire(name, e -> {
                e.queue.lockInterruptibly(maxHoldNanos, watch);
                return true;
            });
        } catch (Throwable x) {
            watch.threw(x);
            throw x;
        }
    }

    @Override
    public boolean tryLock() {
        AttemptWatch watch = watch();
        try {
            return watch.returned(
                    entries.acquire(name, e -> e.queue.tryLock(maxHoldNanos, watch)), AcquisitionObserver.Outcome.BUSY);
        } catch (Throwable x) {
            watch.threw(x);
            throw x;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        AttemptWatch watch = watch();
        try {
            return watch.returned(
                    entries.acquire(name, e -> e.queue.tryLock(time, unit, maxHoldNanos, watch)),
                    time <= 0 ? AcquisitionObserver.Outcome.BUSY : AcquisitionObserver.Outcome.TIMED_OUT);
        } catch (Throwable x) {
            watch.threw(x);
            throw x;
        }
    }

    @Override
    public void unlock() {
        LockEntry e = requireHeld();
        int holds = e.queue.getHoldCount();
        try {
            e.queue.unlock();
        } finally {
            if (e.queue.getHoldCount() < holds) { // not when the backend refused the release: the thread still holds
                entries.leave(e);
            }
        }
    }

    @Override
    public FencingToken token() {
        return requireHeld().queue.token();
    }

    @Override
    public CompletionStage<Void> done() {
        return requireHeld().queue.done();
    }

    @Override
    public Optional<? extends DiscoException> err() {
        return requireHeld().queue.err();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return held() != null;
    }

    @Override
    public int getHoldCount() {
        LockEntry e = held();
        return e == null ? 0 : e.queue.getHoldCount();
    }

    @Override
    public String toString() {
        return "FencedLock[lock '" + name + "' of " + entries
                + (maxHold == null ? "" : ", max hold " + maxHold.toMillis() + " ms") + "]";
    }
}
