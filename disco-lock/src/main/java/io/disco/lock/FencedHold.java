package io.disco.lock;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.fencing.FencingToken;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One hold of a {@link FencedLock} that no thread of the caller's owns: what
 * {@link FencedLock#lockAsync()} hands out, inside a {@link io.disco.fencing.Held} that whoever holds it
 * closes. Its methods work from any thread.
 */
public interface FencedHold extends Fenced {

    /**
     * @return the token of this hold
     * @throws DiscoException the primitive's lost exception ({@link LockLostException} for a lock) if the
     *         hold was lost (its lease, or its maximum hold time): the token is stale
     */
    @Override
    FencingToken token();

    /**
     * Completes, normally, when the hold ends: released, or lost ({@link #err()} then tells). Its
     * dependent actions run on the backend's callback executor, or on the common pool after a release.
     *
     * @return a stage that completes when the hold ends
     */
    CompletionStage<Void> done();

    /** @return the loss of this hold, empty while it is valid */
    Optional<? extends DiscoException> err();
}
