package io.disco.provider.etcd;

import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One service of any primitive on a session, as its calls, for the tests that check a rule of every
 * primitive: acquire (bounded, unbounded, asynchronously), release, close. A lock; a read/write lock, writing
 * ({@link #of}) or reading ({@link #reader}); a semaphore of one permit; an election, campaigning with {@code "v"}.
 */
record AnyPrimitive(
        AnyPrimitive.Bounded bounded,
        AnyPrimitive.Unbounded unbounded,
        Supplier<CompletableFuture<?>> async,
        Runnable releasing,
        Runnable closing)
        implements AutoCloseable {

    /** A bounded acquisition. */
    interface Bounded {
        void acquire(Duration timeout) throws Exception;
    }

    /** An unbounded acquisition. */
    interface Unbounded {
        void acquire() throws Exception;
    }

    /** @return a new service of {@code primitive} on {@code session} (a read/write lock's writes) */
    static AnyPrimitive of(EtcdSession session, Primitive primitive, String name) {
        return switch (primitive) {
            case LOCK -> {
                LockService s = session.newLock(name);
                yield new AnyPrimitive(s::lock, s::lock, s::lockAsync, s::unlock, s::close);
            }
            case RWLOCK -> {
                RWLockService s = session.newRWLock(name);
                yield new AnyPrimitive(s::lock, s::lock, s::lockAsync, s::unlock, s::close);
            }
            case SEMAPHORE -> {
                SemaphoreService s = session.newSemaphore(name, 1);
                yield new AnyPrimitive(s::acquire, s::acquire, s::acquireAsync, s::release, s::close);
            }
            case ELECTION -> {
                ElectionService s = session.newElection(name);
                yield new AnyPrimitive(
                        t -> s.campaign("v", t),
                        () -> s.campaign("v"),
                        () -> s.campaignAsync("v"),
                        s::resign,
                        s::close);
            }
        };
    }

    /** @return a new read/write lock service on {@code session} that reads */
    static AnyPrimitive reader(EtcdSession session, String name) {
        RWLockService s = session.newRWLock(name);
        return new AnyPrimitive(s::rLock, s::rLock, s::rLockAsync, s::rUnlock, s::close);
    }

    void acquire(Duration timeout) throws Exception {
        bounded.acquire(timeout);
    }

    void acquire() throws Exception {
        unbounded.acquire();
    }

    CompletableFuture<?> acquireAsync() {
        return async.get();
    }

    void release() {
        releasing.run();
    }

    @Override
    public void close() {
        closing.run();
    }
}
