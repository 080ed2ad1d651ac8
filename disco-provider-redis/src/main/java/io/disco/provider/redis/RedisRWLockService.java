package io.disco.provider.redis;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.FencingToken;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * {@link RWLockService} on Redis: readers ({@code r}) and writers ({@code w}) queue in one queue; a reader is admitted
 * when no live writer is ahead of it, a writer when it is the first live claim (the scripts decide). Tokens: a writer
 * takes the name's next token and ends the read phase (the record's {@code phase} field deleted); the first reader of
 * a phase takes the next token and records it as the phase's, and every later reader of the phase (on the same
 * primary lineage) shares it; so the readers between two writers share one token strictly between theirs. The grant's
 * lifecycle is {@link RedisQueueService}'s.
 */
final class RedisRWLockService extends RedisQueueService<RWGrant, RWLockLostException> implements RWLockService {

    private RedisRWLockService(SessionCore core, String name) {
        super(core, name, Primitive.RWLOCK, "read/write lock");
    }

    static RedisRWLockService create(SessionCore core, String name) {
        String checked = RedisKeys.checkName(name);
        return core.register(checked, false, () -> new RedisRWLockService(core, checked));
    }

    @Override
    RWGrant grant(String key, ClaimKind kind, long token, int slot, String value) {
        return new RWGrant(
                key, kind == ClaimKind.WRITE ? RWGrant.Mode.WRITE : RWGrant.Mode.READ, FencingToken.of(token));
    }

    @Override
    RWLockLostException lostException(String message, Throwable cause) {
        return new RWLockLostException(message, cause);
    }

    /** True once a live writer's claim is queued behind the held read grant's claim (one read of the queue). */
    @Override
    public boolean writerWaiting() {
        HeldClaim<RWGrant> held = heldClaim();
        if (held == null || held.kind() != ClaimKind.READ) {
            return false;
        }
        SessionThread.refuseOnSessionThread("rwlock.writerWaiting()");
        List<Claimant> all = RedisClaimantListing.list(
                core.link().commands(), core.where(), Primitive.RWLOCK, name, core.requestTimeout());
        boolean behind = false;
        for (Claimant c : all) {
            if (c.key().equals(held.grant().key())) {
                behind = true;
            } else if (c.role() == Claimant.Role.WAITER && c.mode() == Claimant.Mode.EXCLUSIVE) {
                return true; // waiters are listed after every holder, in queue order: behind the readers
            }
        }
        return false;
    }

    @Override
    public RWGrant rLock() throws InterruptedException {
        try {
            return acquire(ClaimKind.READ, null, "rwlock.rLock()", "");
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public RWGrant rLock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(ClaimKind.READ, requireTimeout(timeout), "rwlock.rLock()", "");
    }

    @Override
    public Optional<RWGrant> tryRLock() {
        return tryAcquire(ClaimKind.READ, "rwlock.tryRLock()", "");
    }

    @Override
    public CompletableFuture<RWGrant> rLockAsync() {
        return acquireAsync(ClaimKind.READ, "");
    }

    @Override
    public void rUnlock() {
        release(ClaimKind.READ, "rwlock.rUnlock()");
    }

    @Override
    public RWGrant lock() throws InterruptedException {
        try {
            return acquire(ClaimKind.WRITE, null, "rwlock.lock()", "");
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public RWGrant lock(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(ClaimKind.WRITE, requireTimeout(timeout), "rwlock.lock()", "");
    }

    @Override
    public Optional<RWGrant> tryLock() {
        return tryAcquire(ClaimKind.WRITE, "rwlock.tryLock()", "");
    }

    @Override
    public CompletableFuture<RWGrant> lockAsync() {
        return acquireAsync(ClaimKind.WRITE, "");
    }

    @Override
    public void unlock() {
        release(ClaimKind.WRITE, "rwlock.unlock()");
    }

    @Override
    public CompletableFuture<Void> rUnlockAsync() {
        return releaseAsync(ClaimKind.READ, "rwlock.rUnlock()");
    }

    @Override
    public CompletableFuture<Void> unlockAsync() {
        return releaseAsync(ClaimKind.WRITE, "rwlock.unlock()");
    }
}
