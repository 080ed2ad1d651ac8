package io.disco.provider.redis;

import io.disco.core.Primitive;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * {@link LockService} on Redis: a claim of kind {@code x} in the name's queue; the first live claim in queue order
 * holds the lock (the scripts admit it); the grant's key is the claim's key and its token the name's next token,
 * assigned when the claim is admitted. This class holds the lock's hook and its calls; it makes itself on a session
 * ({@link #create}), and the grant's lifecycle is {@link RedisQueueService}'s.
 */
final class RedisLockService extends RedisQueueService<Grant, LockLostException> implements LockService {

    private RedisLockService(SessionCore core, String name) {
        super(core, name, Primitive.LOCK, "lock");
    }

    /**
     * Makes the lock on {@code name} and registers it on its session.
     *
     * @throws IllegalArgumentException if {@code name} is blank or invalid
     * @throws IllegalStateException if the session has a service on {@code name}, or is closed or lost
     */
    static RedisLockService create(SessionCore core, String name) {
        String checked = RedisKeys.checkName(name);
        return core.register(checked, false, () -> new RedisLockService(core, checked));
    }

    @Override
    Grant grant(String key, ClaimKind kind, long token, int slot, String value) {
        return new Grant(key, FencingToken.of(token));
    }

    @Override
    LockLostException lostException(String message, Throwable cause) {
        return new LockLostException(message, cause);
    }

    @Override
    public Grant lock() throws InterruptedException {
        try {
            return acquire(ClaimKind.LOCK, null, "lock.lock()", "");
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Grant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(ClaimKind.LOCK, requireTimeout(timeout), "lock.lock()", "");
    }

    @Override
    public Optional<Grant> tryLock() {
        return tryAcquire(ClaimKind.LOCK, "lock.tryLock()", "");
    }

    @Override
    public CompletableFuture<Grant> lockAsync() {
        return acquireAsync(ClaimKind.LOCK, "");
    }

    @Override
    public void unlock() {
        release(ClaimKind.LOCK, "lock.unlock()");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync(ClaimKind.LOCK, "lock.unlock()");
    }
}
