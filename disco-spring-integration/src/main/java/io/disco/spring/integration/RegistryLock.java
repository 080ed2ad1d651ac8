package io.disco.spring.integration;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import org.springframework.dao.CannotAcquireLockException;

/**
 * The {@link DiscoLock} of one key: the client's {@link FencedLock} of the key's name, with Spring's
 * exceptions, and a lost hold released locally at the first reentrant acquisition that finds it lost.
 */
final class RegistryLock implements DiscoLock {

    private final String key;
    private final FencedLock lock;
    /** Holds and acquisitions in progress, by all threads: a registry does not expire a lock in use. */
    private final AtomicInteger inUse = new AtomicInteger();
    /** The unlocks this thread still owes for a lost hold that was released locally: each one throws. */
    private final ThreadLocal<int[]> owed = ThreadLocal.withInitial(() -> new int[1]);

    private volatile long lastUsedMillis = System.currentTimeMillis();

    RegistryLock(String key, FencedLock lock) {
        this.key = key;
        this.lock = lock;
    }

    void touch() {
        lastUsedMillis = System.currentTimeMillis();
    }

    /** @return whether nobody holds or acquires this lock, and nobody did for {@code ageMillis} */
    boolean idleFor(long ageMillis, long nowMillis) {
        return inUse.get() == 0 && nowMillis - lastUsedMillis >= ageMillis;
    }

    /**
     * If this thread holds the lock and the hold was lost, releases it locally (every level of it; the
     * unlocks its callers still owe will throw) and returns true.
     */
    private boolean releaseIfLost() {
        if (!lock.isHeldByCurrentThread() || lock.err().isEmpty()) {
            return false;
        }
        int holds = lock.getHoldCount();
        for (int i = 0; i < holds; i++) {
            try {
                lock.unlock();
            } catch (DiscoException lost) {
                // the last unlock of a lost hold tells the loss: known
            }
            inUse.decrementAndGet();
        }
        owed.get()[0] += holds;
        return true;
    }

    private CannotAcquireLockException lostWhileHeld() {
        return new CannotAcquireLockException("the hold of '" + key + "' by this thread was lost (its lease ended):"
                + " it was released here, and this acquisition refused; acquire again for a new hold and token");
    }

    private static CannotAcquireLockException cannotAcquire(String key, DiscoException e) {
        return new CannotAcquireLockException("could not acquire '" + key + "': " + e.getMessage(), e);
    }

    @Override
    public void lock() {
        hold(lock::lock);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        hold(lock::lockInterruptibly);
    }

    @Override
    public boolean tryLock() {
        return attempt(lock::tryLock);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return attempt(() -> lock.tryLock(time, unit));
    }

    /** A blocking acquisition of the client's lock. */
    private interface Blocking<X extends Exception> {
        void run() throws X;
    }

    /** An acquisition of the client's lock that may give up: whether it acquired. */
    private interface Attempt<X extends Exception> {
        boolean run() throws X;
    }

    /** {@code lock()}: refused when this thread's hold was lost (released here first), else the client's acquisition. */
    private <X extends Exception> void hold(Blocking<X> acquisition) throws X {
        if (releaseIfLost()) {
            throw lostWhileHeld();
        }
        acquire(() -> {
            acquisition.run();
            return true;
        });
    }

    /**
     * {@code tryLock()}: false when this thread's hold was lost (released here first), else the client's attempt; a
     * reentrant attempt that failed may have found the hold lost since the check, and releases it.
     */
    private <X extends Exception> boolean attempt(Attempt<X> attempt) throws X {
        if (releaseIfLost()) {
            return false;
        }
        boolean ok = acquire(attempt);
        if (!ok) {
            releaseIfLost(); // lost between the check above and the reentrant attempt
        }
        return ok;
    }

    /** Runs {@code attempt} counted as in use, with a backend's error as Spring's {@link CannotAcquireLockException}. */
    private <X extends Exception> boolean acquire(Attempt<X> attempt) throws X {
        inUse.incrementAndGet();
        boolean ok = false;
        try {
            ok = attempt.run();
        } catch (DiscoException e) {
            throw cannotAcquire(key, e);
        } finally {
            done(ok);
        }
        return ok;
    }

    private void done(boolean acquired) {
        if (!acquired) {
            inUse.decrementAndGet();
        }
        touch();
    }

    @Override
    public void unlock() {
        if (!lock.isHeldByCurrentThread()) {
            int[] owes = owed.get();
            if (owes[0] > 0) {
                owes[0]--;
                throw new ConcurrentModificationException("the hold of '" + key + "' by this thread was lost (its lease"
                        + " ended) and released: another process may have held it since, so the integrity of data it"
                        + " protects may be compromised unless the data's store checks the fencing token");
            }
            throw new IllegalMonitorStateException("this thread does not hold the lock '" + key + "'");
        }
        try {
            lock.unlock();
        } catch (LockLostException lost) {
            // Only a loss: a release without an answer (a DiscoException that is no loss) gave the hold up and
            // is thrown as it is, and an interrupted unlock completes and throws nothing, as Spring's registries do.
            throw new ConcurrentModificationException(
                    "the hold of '" + key + "' by this thread was lost before this"
                            + " unlock (" + lost.getMessage()
                            + "): another process may have held it since, so the integrity of"
                            + " data it protects may be compromised unless the data's store checks the fencing token",
                    lost);
        } finally {
            inUse.decrementAndGet();
            touch();
        }
    }

    @Override
    public FencingToken token() {
        return lock.token();
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return lock.isHeldByCurrentThread();
    }

    /** @return whether the current thread holds the lock and the hold is valid */
    boolean isValidlyHeldByCurrentThread() {
        return lock.isHeldByCurrentThread() && lock.err().isEmpty();
    }

    @Override
    public String key() {
        return key;
    }

    /**
     * Not supported.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("DiscoLock has no conditions: waiting on one would release and"
                + " reacquire the distributed lock, and change the fencing token");
    }

    @Override
    public String toString() {
        return "DiscoLock['" + key + "', " + lock + "]";
    }
}
