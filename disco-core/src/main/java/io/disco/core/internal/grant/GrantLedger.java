package io.disco.core.internal.grant;

import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Where one service's grant stands, and every move of it, the same for every backend: the {@link GrantState}
 * (each move checked), the one acquisition in progress, the held grant, the release of the last grant while it is
 * unconfirmed (issue 44: nothing is handed out until it is), and the loss. Each move is one short step under a
 * private monitor, never waiting for the backend or calling out (the hooks it calls complete a future and return):
 * it returns what the service then does outside it (start the claim, send or wait for a release, withdraw an
 * acquisition, fail the waiting caller). A move the state does not allow throws what the caller sees (the service
 * closed, lost or busy; a grant of another mode held).
 *
 * <p>The backend supplies the rest as hooks: its {@link Acquisition}, its {@link Held} grant and its
 * {@link Release}; and, for each call, what only it can say (whether a held grant fits the request, how to make a
 * release).
 *
 * @param <G> the grant handed to the user
 * @param <H> the backend's held grant
 * @param <A> the backend's acquisition
 * @param <R> the backend's release
 * @param <E> the service's loss
 */
public final class GrantLedger<
        G, H extends Held<G>, A extends Acquisition<G>, R extends Release<H>, E extends RuntimeException> {

    /**
     * How an acquisition began: answered at once (the grant already held, or a try that found an unconfirmed
     * release in the way), or not; and the unconfirmed release it must wait for, if any (a try only hurries it).
     */
    public record Begun<R>(boolean answered, R releaseFirst) {}

    /**
     * A release to send ({@code first}) or to wait for once more; or, with no release, the held grant that this
     * call does not release ({@code mismatch}: another mode), which the caller refuses outside the monitor.
     */
    public record ReleaseStep<R, H>(R release, boolean first, H mismatch) {}

    /** What a close leaves to do: the acquisition to withdraw, the release to send ({@code first}) or to hurry. */
    public record Closing<A, R>(A acquisition, R release, boolean first) {}

    /** What a loss leaves to do: fail the acquisition, delete the held claim, stop the release. */
    public record Ending<A, H, R, E>(E loss, A acquisition, H held, R release) {}

    /** Whose claim is gone: the unconfirmed release's (its deletion is that release's), or the held grant's. */
    public record Gone<R>(R release, boolean held) {}

    /** The service in messages, for example {@code the lock on /locks/orders}. */
    private final String subject;

    private final Object mon = new Object();
    private GrantState state = GrantState.IDLE;
    private A pending;
    private H held;
    /**
     * The release of the last grant while it is unconfirmed (issue 44), else null. The grant is given up when its
     * release starts; until the release is confirmed nothing is handed out: a try finds it in the way, any other
     * acquisition waits for it (creating no claim before), then claims anew, with a new token.
     */
    private R unconfirmed;

    private E loss;
    /** A held grant was lost and no release has reported it yet. */
    private boolean lostHeld;

    /** @param subject the service in messages, for example {@code the lock on /locks/orders} */
    public GrantLedger(String subject) {
        this.subject = subject;
    }

    // ------------------------------------------------------------------ acquiring

    /**
     * Begins acquisition {@code a}: answered at once when a grant is held (if it fits the request) or, for a try,
     * when the last release is unconfirmed (something is in the way); else it is the one in progress.
     *
     * @param a the acquisition
     * @param fits throws if the held grant does not fit {@code a}'s request (another mode)
     * @return how it began
     * @throws IllegalStateException if the service is closed or busy, or what {@code fits} throws
     * @throws RuntimeException the loss, if the service is lost
     */
    public Begun<R> begin(A a, Consumer<H> fits) {
        synchronized (mon) {
            R releaseFirst = unconfirmed;
            switch (state) {
                case CLOSED -> throw new IllegalStateException(subject + " is closed");
                case LOST -> throw loss;
                case ACQUIRING ->
                    throw new IllegalStateException("an acquisition of " + subject
                            + " is already in progress: use one service per concurrent owner");
                case HELD -> {
                    fits.accept(held);
                    a.answerAtOnce(held.grant());
                    return new Begun<>(true, releaseFirst);
                }
                case IDLE -> {
                    if (releaseFirst != null && a.tryOnly()) {
                        // the released grant's claim may still be there, and its delete be applied at any moment:
                        // something is in the way; nothing is handed out from it
                        a.answerAtOnce(null);
                        return new Begun<>(true, releaseFirst);
                    }
                    state = state.to(GrantState.ACQUIRING);
                    pending = a;
                }
            }
            return new Begun<>(false, releaseFirst);
        }
    }

    /**
     * A failed, given-up or empty acquisition: the service is free for the next one.
     *
     * @param a the acquisition that ended
     */
    public void acquisitionEnded(A a) {
        synchronized (mon) {
            if (pending == a) {
                pending = null;
                state = state.to(GrantState.IDLE);
            }
        }
    }

    /**
     * Commits the grant {@code a} won: hands it to the caller ({@link Acquisition#handOver}) and holds it.
     *
     * @param a the acquisition that won
     * @param held the grant with its claim, as {@code a}'s backend holds it
     * @return whether it became the held grant (false: given up, or the service ended meanwhile)
     */
    public boolean commit(A a, H held) {
        synchronized (mon) {
            if (pending != a || state != GrantState.ACQUIRING || !a.handOver(held.grant())) {
                return false;
            }
            state = state.to(GrantState.HELD);
            this.held = held;
            pending = null;
            return true;
        }
    }

    // ------------------------------------------------------------------ the held grant

    /**
     * @param which whether the held grant is the one asked for
     * @return the held grant if {@code which} says it is the one, else null
     */
    public H heldIf(Predicate<H> which) {
        synchronized (mon) {
            return state == GrantState.HELD && which.test(held) ? held : null;
        }
    }

    /**
     * Replaces the held grant if {@code which} says it is still the one (the same term with a new value: an
     * election's proclamation).
     *
     * @param which whether the held grant is still the one to replace
     * @param with makes the replacement from the held grant
     * @return whether it was replaced
     */
    public boolean replace(Predicate<H> which, UnaryOperator<H> with) {
        synchronized (mon) {
            if (state != GrantState.HELD || !which.test(held)) {
                return false;
            }
            held = with.apply(held);
            return true;
        }
    }

    /** @return the held grant, or empty (also while its release is unconfirmed: the grant is given up) */
    public Optional<G> held() {
        synchronized (mon) {
            return state == GrantState.HELD ? Optional.of(held.grant()) : Optional.empty();
        }
    }

    /** @return the loss, once lost */
    public Optional<E> loss() {
        synchronized (mon) {
            return Optional.ofNullable(loss);
        }
    }

    /** @return whether the service is closed */
    public boolean closed() {
        synchronized (mon) {
            return state == GrantState.CLOSED;
        }
    }

    // ------------------------------------------------------------------ releasing

    /**
     * The release of the held grant, made by {@code make} and given up at once (the new unconfirmed one), or the
     * unconfirmed release of the same call again (an earlier call timed out); or the held grant, untouched, when
     * this call does not release it; null if there is none.
     *
     * @param ofThisCall whether a held grant is one this call releases (its mode)
     * @param make makes the release of the held grant (under the monitor: only builds it)
     * @return the release to send or to wait for, the mismatch, or null
     * @throws RuntimeException the loss, once, if a held grant was lost and no release reported it yet; what
     *     {@code make} throws
     */
    public ReleaseStep<R, H> release(Predicate<H> ofThisCall, Function<H, R> make) {
        synchronized (mon) {
            if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
            if (state == GrantState.HELD) {
                if (!ofThisCall.test(held)) {
                    return new ReleaseStep<>(null, false, held);
                }
                return new ReleaseStep<>(giveUp(make), true, null);
            } else if (unconfirmed != null && ofThisCall.test(unconfirmed.held())) {
                // an earlier call of this grant's release timed out: wait for the same release
                return new ReleaseStep<>(unconfirmed, false, null);
            }
            return null;
        }
    }

    /** Under {@link #mon}, in state HELD: gives the held grant up and makes its release the unconfirmed one. */
    private R giveUp(Function<H, R> make) {
        assert Thread.holdsLock(mon);
        R r = make.apply(held);
        unconfirmed = r;
        state = state.to(GrantState.IDLE);
        held = null;
        return r;
    }

    /** @return whether a release of this service is unconfirmed: no acquisition creates a claim before it is */
    public boolean releaseUnconfirmed() {
        synchronized (mon) {
            return unconfirmed != null;
        }
    }

    /**
     * A release's caller reported {@code cause}: if it is the loss of a held grant, it is reported now.
     *
     * @param cause what the caller was told
     */
    public void reported(Throwable cause) {
        synchronized (mon) {
            if (cause == loss) {
                lostHeld = false;
            }
        }
    }

    /**
     * @param r the release confirmed
     * @return the acquisition in progress, which may now go on: {@code r} is confirmed
     */
    public A confirmed(R r) {
        synchronized (mon) {
            if (unconfirmed == r) {
                unconfirmed = null;
            }
            return pending;
        }
    }

    /**
     * {@code r} is over, whatever its outcome: it is not the unconfirmed release any more.
     *
     * @param r the release
     */
    public void over(R r) {
        synchronized (mon) {
            if (unconfirmed == r) {
                unconfirmed = null;
            }
        }
    }

    /**
     * The backend refused {@code r}'s delete for good: if nothing of it can have been applied and no caller was
     * told that the grant is given up (its caller still waits, nothing else began), the grant is held again.
     *
     * @param r the release refused
     * @return whether it is held again
     */
    public boolean holdAgain(R r) {
        synchronized (mon) {
            if (unconfirmed != r || r.givenUp() || r.maybeApplied() || state != GrantState.IDLE || pending != null) {
                return false;
            }
            unconfirmed = null;
            state = state.to(GrantState.HELD);
            held = r.held();
            return true;
        }
    }

    /** @return the state, and the unconfirmed release if any, for {@code toString} */
    public String describe() {
        synchronized (mon) {
            return state + (unconfirmed != null ? ", " + unconfirmed + " unconfirmed" : "");
        }
    }

    // ------------------------------------------------------------------ the endings

    /**
     * Closes the service: the held grant is given up (released by {@code make}; if its release cannot even be made,
     * {@code unreleasable} deletes its claim), the acquisition in progress is left to withdraw.
     *
     * @param make makes the release of the held grant (under the monitor: only builds it)
     * @param unreleasable deletes the held grant's claim when its release cannot be made
     * @return what is left to do; null if the service was closed already
     */
    public Closing<A, R> close(Function<H, R> make, Consumer<H> unreleasable) {
        synchronized (mon) {
            if (state == GrantState.CLOSED) {
                return null;
            }
            A a = pending;
            pending = null;
            boolean first = false;
            if (state == GrantState.HELD) {
                R made = null;
                try {
                    made = giveUp(make);
                } catch (RuntimeException e) {
                    unreleasable.accept(held); // a claim left behind goes once deleted, or with its owner
                }
                first = made != null;
            }
            R r = unconfirmed;
            state = state.to(GrantState.CLOSED);
            held = null;
            return new Closing<>(a, r, first);
        }
    }

    /**
     * The loss of the service, made by {@code lost}; a held grant (or a release whose caller was told it is
     * unconfirmed) reports it at the next release call.
     *
     * @param lost makes the loss (called once, under the monitor)
     * @return what is left to do; null if the service was closed or lost already
     */
    public Ending<A, H, R, E> lose(Supplier<E> lost) {
        synchronized (mon) {
            if (state.finished()) {
                return null;
            }
            loss = lost.get();
            R r = unconfirmed;
            unconfirmed = null;
            // a release whose caller was told it is unconfirmed reports the loss at the next release call
            lostHeld = state == GrantState.HELD || r != null && r.givenUp();
            H h = held;
            A a = pending;
            pending = null;
            state = state.to(GrantState.LOST);
            held = null;
            return new Ending<>(loss, a, h, r);
        }
    }

    /**
     * @param which whether a held grant is the one whose claim is gone
     * @return whose claim it is: the unconfirmed release's, the held grant's, or neither
     */
    public Gone<R> gone(Predicate<H> which) {
        synchronized (mon) {
            R r = unconfirmed != null && which.test(unconfirmed.held()) ? unconfirmed : null;
            return new Gone<>(r, state == GrantState.HELD && which.test(held));
        }
    }
}
