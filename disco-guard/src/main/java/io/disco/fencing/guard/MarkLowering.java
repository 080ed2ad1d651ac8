package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.Optional;

/**
 * Lowering a {@link Guard}'s poisoned mark ({@link Guard#lowerMark}, {@link Guard#lowerMarkToBound}):
 * never below the coordination service's current revision, read afresh from the guard's
 * {@link ConfirmedBound}, and persisted in the store before the mark moves. A maintenance path: it
 * takes the guard's lock and touches nothing the check and admission paths read besides the mark.
 */
final class MarkLowering {

    private MarkLowering() {
    }

    /** {@link Guard#lowerMarkToBound}: to the service's current revision, read afresh. */
    static Optional<FencingToken> toBound(Guard guard) {
        ConfirmedBound b = requireBound(guard);
        long fresh = b.fresh(FencingToken.of(Math.max(1, guard.mark.get())));
        return lowerLocked(guard, FencingToken.of(fresh));
    }

    /** {@link Guard#lowerMark}: to {@code to}, which must be at least the service's current revision. */
    static Optional<FencingToken> to(Guard guard, FencingToken to) {
        Objects.requireNonNull(to, "to");
        ConfirmedBound b = requireBound(guard);
        long fresh = b.fresh(to);
        if (to.value() < fresh) {
            throw new IllegalArgumentException("to (" + to.value() + ") is below the coordination service's current"
                    + " revision " + fresh + ": a mark that low would accept tokens of replaced owners again");
        }
        return lowerLocked(guard, to);
    }

    private static ConfirmedBound requireBound(Guard guard) {
        if (guard.bound == null) {
            throw new IllegalStateException("this guard has no IssuedBound: it cannot tell how low a mark is safe;"
                    + " build it with Guard.builder().issuedBound(...)");
        }
        return guard.bound;
    }

    private static Optional<FencingToken> lowerLocked(Guard guard, FencingToken to) {
        guard.lock.lock();
        try {
            long m = guard.mark.get();
            if (m <= to.value()) {
                return guard.highWater();
            }
            if (guard.store != null) {
                try {
                    guard.store.lower(guard.key, to);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not persist the lowered fencing mark " + to.value()
                            + " for key '" + guard.key + "'; the mark stays " + m, e);
                }
            }
            guard.mark.set(to.value());
            guard.changed.signalAll();
            return guard.highWater();
        } finally {
            guard.lock.unlock();
        }
    }
}
