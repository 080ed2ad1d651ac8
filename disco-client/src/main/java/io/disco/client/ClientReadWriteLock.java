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
 * which acquires, and every release leaves it.
 */
final class ClientReadWriteLock implements FencedReadWriteLock {

    private final String name;
    private final Entries<RWEntry> entries;
    private final Side read = new Side(true);
    private final Side write = new Side(false);

    ClientReadWriteLock(String name, Entries<RWEntry> entries) {
        this.name = name;
        this.entries = entries;
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

        private boolean acquire(Wait wait, long deadline) throws InterruptedException {
            return entries.acquire(name, e -> isRead ? e.acquireRead(wait, deadline) : e.acquireWrite(wait, deadline));
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
            return AsyncAcquisition.start(this);
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
