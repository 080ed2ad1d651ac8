package io.disco.fencing.guard;

import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link Guard}'s high-water mark and what moves it: the comparison of {@link Guard#check}, the
 * confirmation of a token above the mark with the {@link IssuedBound}, and the raise, persisted in the
 * store before the mark moves. A token equal to the mark is accepted on a plain read of one
 * {@link AtomicLong}; only a raise takes {@link #lock}.
 *
 * <p>The fields are package-private for the guard's other parts: {@link OrderedAdmission} waits on
 * {@link #changed}, {@link Epoch} signals it, {@link MarkLowering} lowers the mark.
 */
final class GuardMark {
    /** The key under which the mark is persisted in the store ({@link Guard#SINGLE_KEY} for a guard that is not keyed). */
    final String key;
    /** The high-water mark; 0 while no token has been accepted (tokens are at least 1). */
    final AtomicLong value;

    final GuardStore store;
    /** Taken to raise or lower the mark, to start a new token's epoch, and to wait for one. */
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled under {@link #lock} when the mark moves or an epoch's last admission leaves. */
    final Condition changed = lock.newCondition();

    final GuardEvents events;
    /** Null without an {@link IssuedBound}; shared by every key's guard of a keyed guard. */
    final ConfirmedBound bound;

    GuardMark(String key, long initial, GuardStore store, GuardEvents events, ConfirmedBound bound) {
        this.key = key;
        this.value = new AtomicLong(initial);
        this.store = store;
        this.events = events;
        this.bound = bound;
    }

    /** {@link Guard#check}: accepts a token at least the mark, raising the mark to it; rejects a lower one. */
    FencingToken check(FencingToken token) {
        long t = token.value();
        long m = value.get();
        if (t == m) {
            events.accepted(token);
            return token;
        }
        if (t < m) {
            throw events.stale(token, m);
        }
        confirm(token);
        lock.lock();
        try {
            raiseLocked(token);
        } finally {
            lock.unlock();
        }
        events.accepted(token);
        return token;
    }

    /**
     * A token above the mark must be one the coordination service issued: free when it is at most the
     * confirmed bound, else one (shared) read of the bound. Called before the lock is taken.
     */
    void confirm(FencingToken token) {
        if (bound == null) {
            return;
        }
        try {
            bound.confirm(token);
        } catch (TokenNotIssuedException e) {
            events.rejected(token, GuardListener.Rejection.NOT_ISSUED);
            throw e;
        } catch (BoundUnavailableException e) {
            events.rejected(token, GuardListener.Rejection.BOUND_UNAVAILABLE);
            throw e;
        }
    }

    /**
     * Under {@link #lock}: rejects a stale token, or persists and then accepts a higher one.
     *
     * @throws TokenStaleException if {@code token} is lower than the mark
     * @throws UncheckedIOException if the store could not persist the higher mark (the mark stays)
     */
    void raiseLocked(FencingToken token) {
        long t = token.value();
        long m = value.get();
        if (t < m) {
            throw events.stale(token, m);
        }
        if (t > m) {
            if (store != null) {
                try {
                    store.persist(key, token);
                } catch (IOException e) {
                    events.rejected(token, GuardListener.Rejection.STORE_FAILED);
                    throw new UncheckedIOException(
                            "could not persist the fencing mark " + t + " for key '" + key
                                    + "'; the request is refused",
                            e);
                }
            }
            value.set(t);
            changed.signalAll(); // waiting lower tokens are stale now
        }
    }

    /** @return the mark as a token, empty while nothing has been accepted */
    Optional<FencingToken> highWater() {
        long m = value.get();
        return m == 0 ? Optional.empty() : Optional.of(FencingToken.of(m));
    }
}
