package io.disco.client;

import io.disco.core.Primitive;
import io.disco.lock.LockService;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A lock name in use: the threads' fair local queue ({@link QueuedFencedLock}), in front of one claim through
 * the name's service on the current owner ({@link Entry#service()}).
 */
final class LockEntry extends ServiceEntry<LockService> {

    /** The thread-owned lock of the name, which every handle of the name acquires through. */
    final QueuedFencedLock queue;

    LockEntry(String name, Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner, Retirements retirements) {
        super(name, Primitive.LOCK, currentOwner, retirements);
        this.queue = new QueuedFencedLock(this::service, "lock '" + name + "'");
    }

    @Override
    LockService newService(DiscoBackend.Owner owner) {
        return owner.newLock(name);
    }

    @Override
    List<Holding> held(LockService service, Instant since) {
        return service.held().map(g -> hold(label(), g.key(), g.token(), since)).stream()
                .toList();
    }
}
