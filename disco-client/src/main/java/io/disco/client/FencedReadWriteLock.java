package io.disco.client;

import io.disco.lock.FencedLock;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * A distributed {@link ReadWriteLock} whose read and write locks are {@link FencedLock}s: owned per
 * thread, reentrant, each hold with its fencing token.
 *
 * <p>Tokens follow the read/write lock's rule ({@code io.disco.rwlock.RWGrant}): a write hold's token
 * is strictly greater than every earlier hold's; the readers of one read phase share one token. The
 * readers of this process hold one shared read claim in the backend: a thread that reads while another
 * thread of this process already reads joins that claim and its token, even when a writer of another
 * process has asked since; that writer gets in once the readers of this process have all unlocked.
 * Within the process the local lock is fair: once a thread of this process waits to write, later
 * readers of this process wait behind it.
 *
 * <p>No upgrade and no downgrade: a thread that holds the read lock and asks for the write lock, or
 * holds the write lock and asks for the read lock, gets {@link IllegalStateException} (the backend
 * cannot turn one claim into the other without a gap in which another owner could get in).
 */
public interface FencedReadWriteLock extends ReadWriteLock {

    /** @return the shared lock; its token is the read phase's */
    @Override
    FencedLock readLock();

    /** @return the exclusive lock */
    @Override
    FencedLock writeLock();
}
