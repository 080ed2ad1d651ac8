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
 * takes the mark's lock and touches nothing the check and admission paths read besides the mark.
 */
final class MarkLowering {

    private MarkLowering() {}

    /** {@link Guard#lowerMarkToBound}: to the service's current revision, read afresh. */
    static Optional<FencingToken> toBound(GuardMark mark) {
        ConfirmedBound b = requireBound(mark);
        long fresh = b.fresh(FencingToken.of(Math.max(1, mark.value.get())));
        return lowerLocked(mark, FencingToken.of(fresh));
    }

    /** {@link Guard#lowerMark}: to {@code to}, which must be at least the service's current revision. */
    static Optional<FencingToken> to(GuardMark mark, FencingToken to) {
        Objects.requireNonNull(to, "to");
        ConfirmedBound b = requireBound(mark);
        long fresh = b.fresh(to);
        if (to.value() < fresh) {
            throw new IllegalArgumentException("to (" + to.value() + ") is below the coordination service's current"
                    + " revision " + fresh + ": a mark that low would accept tokens of replaced owners again");
        }
        return lowerLocked(mark, to);
    }

    private static ConfirmedBound requireBound(GuardMark mark) {
        if (mark.bound == null) {
            throw new IllegalStateException("this guard has no IssuedBound: it cannot tell how low a mark is safe;"
                    + " build it with Guard.builder().issuedBound(...)");
        }
        return mark.bound;
    }

    private static Optional<FencingToken> lowerLocked(GuardMark mark, FencingToken to) {
        mark.lock.lock();
        try {
            long m = mark.value.get();
            if (m <= to.value()) {
                return mark.highWater();
            }
            if (mark.store != null) {
                try {
                    mark.store.lower(mark.key, to);
                } catch (IOException e) {
                    throw new UncheckedIOException(
                            "could not persist the lowered fencing mark " + to.value() + " for key '" + mark.key
                                    + "'; the mark stays " + m,
                            e);
                }
            }
            mark.value.set(to.value());
            mark.changed.signalAll();
            return mark.highWater();
        } finally {
            mark.lock.unlock();
        }
    }
}
