package io.disco.client;

import io.disco.core.Primitive;
import io.disco.fencing.DiscoService;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * An {@link Entry} whose service is one of the backend's own (a lock's, a read/write lock's, an election's): lost
 * once it reports a loss in {@code err()}, closed through its own {@code close}.
 *
 * @param <S> the service type
 */
abstract class ServiceEntry<S extends DiscoService<?, ?>> extends Entry<S> {

    ServiceEntry(
            String name,
            Primitive primitive,
            Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner,
            Retirements retirements) {
        super(name, primitive, currentOwner, retirements);
    }

    @Override
    final boolean isLost(S service) {
        return service.err().isPresent();
    }

    @Override
    final void close(S service) {
        service.close();
    }

    @Override
    final CompletableFuture<Void> closeAsync(S service) {
        return service.closeAsync();
    }
}
