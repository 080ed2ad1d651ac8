package io.disco.client;

import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * An election name in use by this client: it has one candidate at most (an open
 * {@link Disco#election(String)}, or the current attempt of a {@link Disco#leadershipRunner}), since a
 * candidate's key is its owner's. The entry keeps no service of its own: the candidate's
 * {@link ClientElection} owns its service and leaves the entry when it closes or finishes.
 */
final class ElectionEntry extends ServiceEntry<ElectionService> {

    /** Whether a candidate of this client is open on the name. */
    final AtomicBoolean candidate = new AtomicBoolean();
    /** The open candidate's service, for {@link #holdings()}; null while none. */
    volatile ElectionService current;

    ElectionEntry(String name, Supplier<CompletableFuture<DiscoBackend.Owner>> currentOwner, Retirements retirements) {
        super(name, Primitive.ELECTION, currentOwner, retirements);
    }

    @Override
    ElectionService serviceForHoldings() {
        return current;
    }

    @Override
    List<Holding> held(ElectionService service, Instant since) {
        return service.held().map(l -> hold(label(), l.key(), l.token(), since)).stream()
                .toList();
    }

    @Override
    ElectionService newService(DiscoBackend.Owner owner) {
        return owner.newElection(name);
    }
}
