package io.disco.client;

import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The {@link FencedLock} of one {@link LockService}, for code that holds a service of its own rather than a
 * {@link Disco} client: the same thread-owned lock as {@link Disco#lock(String)}'s (a fair local queue in front
 * of one claim, reentrant, with {@code withMaxHold} and {@code lockAsync}), claiming through that one service
 * only. The interface lives in disco-lock; its implementation, like every thread-owned handle's, lives here.
 */
public final class FencedLocks {

    private FencedLocks() {}

    /**
     * A view of {@code service}. One view per service: two views of one service would both think they own its
     * single grant. The view does not own the service: closing it is the caller's duty (and ends the view).
     * After a loss, every later acquisition fails with the service's loss; unlike a client's lock, the view never
     * claims through another service.
     *
     * @param service the lock service; the view never closes it
     * @return the view
     * @throws NullPointerException if {@code service} is null
     */
    public static FencedLock of(LockService service) {
        Objects.requireNonNull(service, "service");
        CompletableFuture<LockService> always = CompletableFuture.completedFuture(service);
        return new QueuedFencedLock(() -> always, service.toString());
    }
}
