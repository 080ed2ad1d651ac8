package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The handle {@link Disco#lock(String)} returns: a name and the client. Every acquisition joins the
 * name's entry (making it if the name was idle) and every release leaves it, so the entry lives
 * exactly as long as somebody holds or waits.
 */
final class ClientLock implements FencedLock {

    private final Engine engine;
    private final String name;
    /** The maximum hold time of this handle's acquisitions, or null for none. */
    private final Duration maxHold;

    ClientLock(Engine engine, String name) {
        this(engine, name, null);
    }

    private ClientLock(Engine engine, String name, Duration maxHold) {
        this.engine = engine;
        this.name = name;
        this.maxHold = maxHold;
    }

    /** The entry's queue, through which this handle acquires. */
    private FencedLock acquiring(LockEntry e) {
        return maxHold == null ? e.queue : e.queue.withMaxHold(maxHold);
    }

    @Override
    public FencedLock withMaxHold(Duration maxHold) {
        Objects.requireNonNull(maxHold, "maxHold");
        if (maxHold.isZero() || maxHold.isNegative()) {
            throw new IllegalArgumentException("maxHold must be positive, got " + maxHold);
        }
        return new ClientLock(engine, name, maxHold);
    }

    private LockEntry join() {
        return engine.registry().join(name, Kind.LOCK, LockEntry.class, n -> new LockEntry(engine, n));
    }

    /** The entry, if this thread holds the lock. */
    private LockEntry held() {
        LockEntry e = engine.registry().get(name, LockEntry.class);
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
        engine.requireOpen();
        LockEntry e = join();
        boolean ok = false;
        try {
            acquiring(e).lock();
            ok = true;
        } finally {
            if (!ok) {
                engine.registry().leave(e);
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        engine.requireOpen();
        LockEntry e = join();
        boolean ok = false;
        try {
            acquiring(e).lockInterruptibly();
            ok = true;
        } finally {
            if (!ok) {
                engine.registry().leave(e);
            }
        }
    }

    @Override
    public boolean tryLock() {
        engine.requireOpen();
        LockEntry e = join();
        boolean ok = false;
        try {
            ok = acquiring(e).tryLock();
            return ok;
        } finally {
            if (!ok) {
                engine.registry().leave(e);
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        engine.requireOpen();
        LockEntry e = join();
        boolean ok = false;
        try {
            ok = acquiring(e).tryLock(time, unit);
            return ok;
        } finally {
            if (!ok) {
                engine.registry().leave(e);
            }
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
                engine.registry().leave(e);
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

    /**
     * Not supported.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("FencedLock has no conditions: waiting on one would release and"
                + " reacquire the distributed lock, and change the fencing token");
    }

    @Override
    public String toString() {
        return "FencedLock[lock '" + name + "' of " + engine + (maxHold == null ? "" : ", max hold " + maxHold.toMillis() + " ms") + "]";
    }
}
