package io.disco.provider.redis;

import io.disco.core.Claimant;
import io.disco.core.Primitive;
import io.disco.core.internal.SessionThread;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreLostException;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * {@link SemaphoreService} on Redis: permit claims ({@code p}) queue in the name's queue; a claim is admitted among
 * the first {@code limit} live claims and takes the lowest free slot of {@code disco:{n}:slots} (a slot is free when
 * nobody holds it or its holder's claim is gone); its token is the name's next token, so a slot's tokens grow with
 * every holder. The limit is recorded once per name in the token record ({@code limit.lua}); another limit is
 * refused. The grant's lifecycle is {@link RedisQueueService}'s.
 */
final class RedisSemaphoreService extends RedisQueueService<Permit, SemaphoreLostException>
        implements SemaphoreService {

    private final int limit;

    private RedisSemaphoreService(SessionCore core, String name, int limit) {
        super(core, name, Primitive.SEMAPHORE, "semaphore");
        this.limit = limit;
    }

    /**
     * @throws IllegalArgumentException if {@code name} is blank or invalid, {@code limit < 1}, or the semaphore exists
     *     with another limit
     * @throws IllegalStateException if the session has a service on {@code name} other than a semaphore, or is closed
     *     or lost
     * @throws DiscoException if Redis failed while the limit was checked
     */
    static RedisSemaphoreService create(SessionCore core, String name, int limit) {
        String checked = RedisKeys.checkName(name);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        core.checkFree(checked, true);
        boolean interrupted = Thread.interrupted();
        try {
            List<Object> recorded = Calls.get(
                    Scripts.LIMIT.run(core.link().commands(), checked, Integer.toString(limit)),
                    core.requestTimeout(),
                    core.where(),
                    "reading the limit of the semaphore " + checked);
            String r = String.valueOf(recorded.get(0));
            if (!r.equals(Integer.toString(limit))) {
                throw new IllegalArgumentException("the semaphore " + checked + " exists with limit " + r
                        + "; this service asked for limit " + limit);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return core.register(checked, true, () -> new RedisSemaphoreService(core, checked, limit));
    }

    @Override
    Permit grant(String key, ClaimKind kind, long token, int slot, String value) {
        return new Permit(name, key, slot, FencingToken.of(token));
    }

    @Override
    SemaphoreLostException lostException(String message, Throwable cause) {
        return new SemaphoreLostException(message, cause);
    }

    @Override
    public Permit acquire() throws InterruptedException {
        try {
            return acquire(ClaimKind.PERMIT, null, "semaphore.acquire()", "");
        } catch (TimeoutException e) {
            throw new AssertionError("no timeout was given", e);
        }
    }

    @Override
    public Permit acquire(Duration timeout) throws InterruptedException, TimeoutException {
        return acquire(ClaimKind.PERMIT, requireTimeout(timeout), "semaphore.acquire()", "");
    }

    @Override
    public Optional<Permit> tryAcquire() {
        return tryAcquire(ClaimKind.PERMIT, "semaphore.tryAcquire()", "");
    }

    @Override
    public CompletableFuture<Permit> acquireAsync() {
        return acquireAsync(ClaimKind.PERMIT, "");
    }

    @Override
    public void release() {
        release(ClaimKind.PERMIT, "semaphore.release()");
    }

    @Override
    public CompletableFuture<Void> releaseAsync() {
        return releaseAsync(ClaimKind.PERMIT, "semaphore.release()");
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public Stat stat() {
        SessionThread.refuseOnSessionThread("semaphore.stat()");
        List<Claimant> all = RedisClaimantListing.list(
                core.link().commands(), core.where(), Primitive.SEMAPHORE, name, core.requestTimeout());
        return new Stat(limit, all.size());
    }
}
