package io.disco.spring.integration;

import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The lock {@link DiscoLockRegistry#obtain(Object)} returns: a distributed, per-thread, reentrant
 * {@link Lock} with the fencing token of the current hold, kept by the disco client's lease (no TTL
 * to guess, no renewal task).
 *
 * <ul>
 *   <li><b>Token.</b> {@link #token()} is the current thread's hold's token, the same for every nested
 *       hold, strictly greater than every earlier hold's of the same key by any process. Send it with
 *       every write to the resource the lock protects, and have the resource reject a lower one than it
 *       has seen (disco's guard, or a token column: {@code disco-jdbc}).</li>
 *   <li><b>Loss.</b> When the client's lease is lost while a thread holds the lock (expired during a
 *       pause or a partition, or revoked), another process may hold it. The thread learns it at its next
 *       use: {@link #token()} throws {@code LockLostException}; a reentrant {@link #tryLock()} or
 *       {@link #tryLock(long, TimeUnit)} returns false and a reentrant {@link #lock()} or
 *       {@link #lockInterruptibly()} throws {@code CannotAcquireLockException}, and both release the lost
 *       hold locally (so that the next acquisition claims afresh, with a new token); every
 *       {@link #unlock()} still owed for the lost hold throws {@link ConcurrentModificationException}, as
 *       Spring's Redis and JDBC registries do when the lock expired in their store.</li>
 *   <li>{@link #unlock()} by a thread that does not hold the lock throws {@link IllegalMonitorStateException},
 *       as {@link Lock#unlock()} says (and Spring's JDBC registry does; its Redis registry throws an
 *       {@code IllegalStateException}); failures of the backend during an acquisition are thrown as
 *       {@code org.springframework.dao.CannotAcquireLockException}.</li>
 *   <li>{@link #newCondition()} is not supported.</li>
 * </ul>
 */
public interface DiscoLock extends Lock, Fenced {

    /**
     * The token of the current thread's hold.
     *
     * @return the token, the same for every nested hold
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws io.disco.lock.LockLostException if the hold was lost: the token is stale
     */
    @Override
    FencingToken token();

    /**
     * Releases one hold; the last one releases the distributed lock.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     * @throws ConcurrentModificationException if the hold was lost before this unlock (the lock is
     *         released locally all the same; its cause is the loss)
     */
    @Override
    void unlock();

    /** @return whether the current thread holds the lock (a lost hold counts until it is released) */
    boolean isHeldByCurrentThread();

    /** @return the key this lock was obtained for */
    String key();
}
