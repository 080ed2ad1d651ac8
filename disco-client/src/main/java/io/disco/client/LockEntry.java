package io.disco.client;

import java.util.List;
import io.disco.lock.FencedLock;
import io.disco.lock.LockService;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** A lock name in use: the threads' fair local queue, in front of one claim through the current owner's service. */
final class LockEntry extends Entry<LockService> {

    final FencedLock queue;

    LockEntry(Engine engine, String name) {
        super(engine, name, Kind.LOCK);
        this.queue = FencedLock.queued(this::service, "lock '" + name + "'");
    }

    @Override
    LockService newService(DiscoBackend.Owner owner) {
        return owner.newLock(name);
    }

    @Override
    List<Holding> held(LockService service, Instant since) {
        return service.held().map(g -> new Holding(name, kind.toString(), Holding.State.HELD, Optional.of(g.key()),
                Optional.of(g.token()), since)).stream().toList();
    }

    @Override
    boolean isLost(LockService service) {
        return service.err().isPresent();
    }

    @Override
    void close(LockService service) {
        service.close();
    }

    @Override
    CompletableFuture<Void> closeAsync(LockService service) {
        return service.closeAsync();
    }
}
