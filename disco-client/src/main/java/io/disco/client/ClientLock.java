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
 * waits. The handle itself holds nothing.
 */
final class ClientLock implements FencedLock {

    private final String name;
    private final Entries<LockEntry> entries;
    /** The maximum hold time of this handle's acquisitions, or null for none. */
    private final Duration maxHold;

    ClientLock(String name, Entries<LockEntry> entries) {
        this(name, entries, null);
    }

    private ClientLock(String name, Entries<LockEntry> entries, Duration maxHold) {
        this.name = name;
        this.entries = entries;
        this.maxHold = maxHold;
    }

    /** The entry's queue, through which this handle acquires. */
    private FencedLock acquiring(LockEntry e) {
        return maxHold == null ? e.queue : e.queue.withMaxHold(maxHold);
    }

    @Override
    public FencedLock withMaxHold(Duration maxHold) {
        MaxHold.nanos(maxHold); // checks it
        return new ClientLock(name, entries, maxHold);
    }

    @Override
    public CompletableFuture<Held<FencedHold>> lockAsync() {
        return AsyncAcquisition.start(this);
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

    @Override
    public void lock() {
        entries.acquire(name, e -> {
            acquiring(e).lock();
            return true;
        });
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        entries.acquire(name, e -> {
            acquiring(e).lockInterruptibly();
            return true;
        });
    }

    @Override
    public boolean tryLock() {
        return entries.acquire(name, e -> acquiring(e).tryLock());
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return entries.acquire(name, e -> acquiring(e).tryLock(time, unit));
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
