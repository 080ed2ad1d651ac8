package io.disco.core;

/**
 * The coordination primitives, for calls that work on any of them by name ({@link DiscoSession#claimants},
 * the client's {@code Disco.claimants}).
 */
public enum Primitive {
    /** A lock ({@code LockService}, etcd's Go {@code concurrency.Mutex}). */
    LOCK,
    /** A read/write lock ({@code RWLockService}, etcd's Go {@code recipes.RWMutex}). */
    RWLOCK,
    /** A counting semaphore ({@code SemaphoreService}, the Go disco semaphore). */
    SEMAPHORE,
    /** An election ({@code ElectionService}, etcd's Go {@code concurrency.Election}). */
    ELECTION
}
