package io.disco.client;

/** The kinds of primitive a name may be claimed as, for calls that work on any of them ({@link Disco#claimants}). */
public enum Primitive {
    /** A lock ({@link Disco#lock(String)}; etcd's Go {@code concurrency.Mutex}). */
    LOCK,
    /** A read/write lock ({@link Disco#readWriteLock(String)}; etcd's Go {@code recipes.RWMutex}). */
    READ_WRITE_LOCK,
    /** A counting semaphore (the Go disco semaphore). */
    SEMAPHORE,
    /** An election ({@link Disco#election(String)}; etcd's Go {@code concurrency.Election}). */
    ELECTION
}
