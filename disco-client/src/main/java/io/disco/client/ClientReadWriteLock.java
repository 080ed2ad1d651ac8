package io.disco.client;

import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The handle {@link Disco#readWriteLock(String)} returns: a name and the client's read/write lock entries, with
 * its two thread-owned sides. As with {@link ClientLock}, every acquisition joins the name's {@link RWEntry},
 * which acquires, and every release leaves it; and every acquisition that is not reentrant starts its
 * {@link AttemptWatch} here, on the calling thread, and ends it here when it is not granted.
 */
final class ClientReadWriteLock implements FencedReadWriteLock {

    private final String name;
    private final Entries<RWEntry> entries;
    private final Observers observers;
    private final Side read = new Side(true);
    private final Side write = new Side(false);

    ClientReadWriteLock(String name, Entries<RWEntry> entries) {
        this.name = name;
        this.entries = entries;
        this.observers = entries.observers();
    }

    @Override
    public FencedLock readLock() {
        return read;
    }

    @Override
    public FencedLock writeLock() {
        return write;
    }

    @Override
    public String toString() {
        return "FencedReadWriteLock[read/write lock '" + name + "' of " + entries + "]";
    }

    /** The read or the write lock. */
    private final class Side implements FencedLock {

        private final boolean isRead;

        Side(boolean isRead) {
            this.isRead = isRead;
        }

        /**
         * @return the watch of an acquisition by this thread: {@link AttemptWatch#OFF} without observers, and for a
         *     reentrant one (it holds nothing new)
         */
        private AttemptWatch watch() {
            return !observers.on() || isHeldByCurrentThread()
                    ? AttemptWatch.OFF
                    : observers.start(
                            isRead ? AcquisitionObserver.Kind.READ_LOCK : AcquisitionObserver.Kind.WRITE_LOCK, name);
        }

        private boolean acquire(Wait wait, long deadline) throws InterruptedException {
            return acquire(wait, deadline, watch());
        }

        /** Ends {@code watch} when not granted (false, or thrown); the entry tells it the grant. */
        private boolean acquire(Wait wait, long deadline, AttemptWatch watch) throws InterruptedException {
            try {
                return watch.returned(
                        entries.acquire(
                                name,
                                e -> isRead
                                        ? e.acquireRead(wait, deadline, watch)
                                        : e.acquireWrite(wait, deadline, watch)),
                        wait == Wait.NOT_AT_ALL
                                ? AcquisitionObserver.Outcome.BUSY
                                : AcquisitionObserver.Outcome.TIMED_OUT);
            } catch (Throwable x) {
                watch.threw(x);
                throw x;
            }
        }

        private boolean holds(RWEntry e) {
            return e != null && (isRead ? e.local.getReadHoldCount() > 0 : e.local.isWriteLockedByCurrentThread());
        }

        private RWEntry held() {
            RWEntry e = entries.get(name);
            if (!holds(e)) {
                throw new IllegalMonitorStateException(
                        "this thread does not hold the " + (isRead ? "read" : "write") + " lock of '" + name + "'");
            }
            return e;
        }

        @Override
        public void lock() {
            try {
                acquire(Wait.UNINTERRUPTIBLY, 0);
            } catch (InterruptedException e) {
                throw new AssertionError("an uninterruptible wait was interrupted", e);
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            acquire(Wait.INTERRUPTIBLY, Long.MAX_VALUE);
        }

        @Override
        public boolean tryLock() {
            try {
                return acquire(Wait.NOT_AT_ALL, 0);
            } catch (InterruptedException e) {
                throw new AssertionError("tryLock() does not wait", e);
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            long nanos = unit.toNanos(time);
            return nanos <= 0 ? tryLock() : acquire(Wait.INTERRUPTIBLY, System.nanoTime() + nanos);
        }

        @Override
        public CompletableFuture<Held<FencedHold>> lockAsync() {
            // started here, on the caller's thread; the acquisition's own thread is new, so never reentrant
            AttemptWatch watch = observers.start(
                    isRead ? AcquisitionObserver.Kind.READ_LOCK : AcquisitionObserver.Kind.WRITE_LOCK, name);
            return AsyncAcquisition.start(this, watch, () -> acquire(Wait.INTERRUPTIBLY, Long.MAX_VALUE, watch));
        }

        @Override
        public void unlock() {
            RWEntry e = held();
            int holds = holdCount(e);
            try {
                if (isRead) {
                    e.releaseRead();
                } else {
                    e.releaseWrite();
                }
            } finally {
                if (holdCount(e) < holds) { // not when the backend refused the release: the thread still holds
                    entries.leave(e);
                }
            }
        }

        @Override
        public FencingToken token() {
            RWEntry e = held();
            return isRead ? e.readToken() : e.writeToken();
        }

        @Override
        public CompletionStage<Void> done() {
            RWEntry e = held();
            return isRead ? e.readDone() : e.writeDone();
        }

        @Override
        public Optional<? extends DiscoException> err() {
            RWEntry e = held();
            return isRead ? e.readErr() : e.writeErr();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return holds(entries.get(name));
        }

        @Override
        public int getHoldCount() {
            RWEntry e = entries.get(name);
            return e == null ? 0 : holdCount(e);
        }

        private int holdCount(RWEntry e) {
            return isRead ? e.local.getReadHoldCount() : e.local.getWriteHoldCount();
        }

        @Override
        public String toString() {
            return "FencedLock[" + (isRead ? "read" : "write") + " lock of '" + name + "' of " + entries + "]";
        }
    }
}
