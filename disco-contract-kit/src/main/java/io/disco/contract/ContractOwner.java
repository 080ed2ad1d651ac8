package io.disco.contract;

import io.disco.election.ElectionService;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.util.concurrent.CompletionStage;

/**
 * One owner for the contract kit: a session with its own lease, on which any number of primitives are created
 * (at most one per name, as the backend's session rules say). Two owners contend as two processes would.
 *
 * <p>Closing the owner closes its services and ends its lease; the kit closes every owner it opened.
 */
public interface ContractOwner extends AutoCloseable {

    /**
     * Creates a lock on {@code name}, on this owner's session.
     *
     * @param name the lock's name
     * @return the lock; closing it releases it and keeps the owner's session
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws IllegalStateException    if this owner already has a service on {@code name}
     */
    LockService newLock(String name);

    /**
     * Creates a read/write lock on {@code name}, on this owner's session.
     *
     * @param name the lock's name
     * @return the read/write lock
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws IllegalStateException    if this owner already has a service on {@code name}
     */
    RWLockService newRWLock(String name);

    /**
     * Creates a semaphore of {@code limit} permits on {@code name}, on this owner's session: one more holder of
     * one permit (an owner may have several semaphore services on one name, each its own holder).
     *
     * @param name  the semaphore's name
     * @param limit the number of permits
     * @return the semaphore
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank, {@code limit < 1}, or the semaphore
     *                                  exists with another limit
     * @throws IllegalStateException    if this owner has a service of another kind on {@code name}
     */
    SemaphoreService newSemaphore(String name, int limit);

    /**
     * Creates an election on {@code name}, on this owner's session.
     *
     * @param name the election's name
     * @return the election
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank
     * @throws IllegalStateException    if this owner already has a service on {@code name}
     */
    ElectionService newElection(String name);

    /**
     * Ends this owner's lease from outside (an operator's revoke, the server expiring a session), without telling
     * the owner: every service on it must find out by itself, and nothing it held or waited for may survive.
     *
     * @throws Exception if the backend cannot be reached
     */
    void revoke() throws Exception;

    /**
     * Stops renewing this owner's lease without releasing anything, as a process that froze: the backend ends
     * the lease after its time to live, and a new owner gets in.
     */
    void freeze();

    /**
     * Completes when this owner's lease is lost or the owner is closed; closing one service does not complete
     * it.
     *
     * @return the owner's end
     */
    CompletionStage<Void> done();

    /** Closes every service of this owner and ends its lease. Idempotent. */
    @Override
    void close();
}
