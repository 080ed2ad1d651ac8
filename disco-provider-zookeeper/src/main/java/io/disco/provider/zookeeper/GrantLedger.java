package io.disco.provider.zookeeper;

import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Where one queue service's grant stands, and every move of it: the {@link GrantState} (each move checked), the
 * one acquisition in progress, the {@link HeldGrant}, the release of the last grant while it is unconfirmed
 * (issue 44: nothing is handed out until it is), and the loss. Each move is one short step under a private
 * monitor, never waiting for ZooKeeper or calling out: it returns what the service then does outside it (start a
 * worker, send or wait for a release, withdraw an attempt, tell the waiting caller). A move the state does not
 * allow throws what the caller sees (the service closed, lost, busy, or holding another kind of grant).
 *
 * @param <G> the grant
 * @param <E> the loss
 */
final class GrantLedger<G extends Fenced, E extends DiscoException> {

    /**
     * How an acquisition began: answered at once with the grant already held, or not; and the unconfirmed
     * release it must wait for (a try only nudges it), if any.
     */
    record Begun<G extends Fenced>(boolean answeredWithHeld, QueueRelease<G> releaseFirst) {}

    /** A release to send ({@code first}) or to wait for once more. */
    record ReleaseStep<G extends Fenced>(QueueRelease<G> release, boolean first) {}

    /** What a close leaves to do: the attempt to withdraw, the release to send ({@code first}) or to nudge. */
    record Closing<G extends Fenced>(QueueAttempt<G> attempt, QueueRelease<G> release, boolean first) {}

    /** What a loss leaves to do: fail the attempt, delete the held node, stop the release. */
    record Ending<G extends Fenced, E>(E loss, QueueAttempt<G> attempt, String heldNode, QueueRelease<G> release) {}

    /** Whose node is gone: the unconfirmed release's (its deletion is that release's), or the held grant's. */
    record NodeGone<G extends Fenced>(QueueRelease<G> release, boolean held) {}

    /** How the service is called in messages. */
    private final QueueProtocol<G> names;

    private final Object mon = new Object();
    private GrantState state = GrantState.IDLE;
    private QueueAttempt<G> pending;
    private HeldGrant<G> held;
    /**
     * The release of the last grant while it is unconfirmed (issue 44), else null. The grant is given up when its
     * release starts; until the release is confirmed nothing is handed out: a try finds it in the way, any other
     * acquisition waits for it (its worker creates no node before), then claims anew with a new node.
     */
    private QueueRelease<G> unconfirmed;

    private E loss;
    /** A held grant was lost and no release has reported it yet. */
    private boolean lostHeld;

    GrantLedger(QueueProtocol<G> names) {
        this.names = names;
    }

    // ------------------------------------------------------------------ acquiring

    /**
     * Begins acquisition {@code a}: answered at once when the grant is held (the same kind) or, for a try, when the
     * last release is unconfirmed (something is in the way); else it is the one in progress.
     *
     * @throws IllegalStateException if the service is closed, busy, or holds another kind of grant
     * @throws DiscoException the loss, if the service is lost
     */
    Begun<G> begin(QueueAttempt<G> a) {
        synchronized (mon) {
            QueueRelease<G> releaseFirst = unconfirmed;
            switch (state) {
                case CLOSED ->
                    throw new IllegalStateException("the " + names.what() + " on " + names.path + " is closed");
                case LOST -> throw loss;
                case WAITING ->
                    throw new IllegalStateException("an acquisition of the " + names.what() + " on " + names.path
                            + " is already in progress: use one service per concurrent owner");
                case HELD -> {
                    if (held.kind() != a.kind) {
                        throw new IllegalStateException(
                                "this service holds a " + names.modeName(held.kind()) + " grant of the " + names.what()
                                        + " on " + names.path + ": there is no upgrade or downgrade; release it first");
                    }
                    a.future.complete(held.grant());
                    a.withdrawn.complete(null);
                    return new Begun<>(true, releaseFirst);
                }
                case IDLE -> {
                    if (releaseFirst != null && a.tryOnly) {
                        // the released grant's node may still be there, and its delete be applied at any moment:
                        // something is in the way; nothing is handed out from it
                        a.future.complete(null);
                        a.withdrawn.complete(null);
                    } else {
                        state = state.to(GrantState.WAITING);
                        pending = a;
                    }
                }
            }
            return new Begun<>(false, releaseFirst);
        }
    }

    /** A failed, cancelled or empty attempt: the service is free for the next one. */
    void attemptEnded(QueueAttempt<G> a) {
        synchronized (mon) {
            if (pending == a) {
                pending = null;
                state = state.to(GrantState.IDLE);
            }
        }
    }

    /** @return whether {@code a}'s grant became the held one (false: given up, or the service ended meanwhile) */
    boolean commit(QueueAttempt<G> a, G grant) {
        synchronized (mon) {
            if (pending != a || state != GrantState.WAITING) {
                return false;
            }
            if (!a.future.complete(grant)) {
                return false;
            }
            state = state.to(GrantState.HELD);
            held = new HeldGrant<>(grant, a.kind, a.node, a.watcher);
            pending = null;
            return true;
        }
    }

    // ------------------------------------------------------------------ the held grant

    /** @return the held grant if its node is {@code node}, else null */
    HeldGrant<G> heldAt(String node) {
        synchronized (mon) {
            return state == GrantState.HELD && node.equals(held.node()) ? held : null;
        }
    }

    /** @return whether {@code current} was still the held grant, now replaced by {@code next} */
    boolean replace(G current, G next) {
        synchronized (mon) {
            if (state != GrantState.HELD || held.grant() != current) {
                return false;
            }
            held = held.withGrant(next);
            return true;
        }
    }

    /** @return the held node's path, or null */
    String heldNode() {
        synchronized (mon) {
            return state == GrantState.HELD ? held.node() : null;
        }
    }

    Optional<G> held() {
        synchronized (mon) {
            return state == GrantState.HELD ? Optional.of(held.grant()) : Optional.empty();
        }
    }

    Optional<E> loss() {
        synchronized (mon) {
            return Optional.ofNullable(loss);
        }
    }

    boolean closed() {
        synchronized (mon) {
            return state == GrantState.CLOSED;
        }
    }

    // ------------------------------------------------------------------ releasing

    /**
     * The release of the held grant of {@code kind}: made by {@code make} and given up at once (the new unconfirmed
     * one), or the unconfirmed release of that kind again (an earlier call timed out); null if there is none.
     *
     * @throws DiscoException the loss, once, if a held grant was lost and no release reported it yet
     * @throws IllegalStateException if another kind of grant is held
     */
    ReleaseStep<G> release(NodeKind kind, String call, Function<HeldGrant<G>, QueueRelease<G>> make) {
        synchronized (mon) {
            if (lostHeld) {
                lostHeld = false;
                throw loss;
            }
            if (state == GrantState.HELD) {
                if (held.kind() != kind) {
                    throw new IllegalStateException(call + ": this service holds a " + names.modeName(held.kind())
                            + " grant of the " + names.what() + " on " + names.path + ", not a " + names.modeName(kind)
                            + " one; nothing was released");
                }
                return new ReleaseStep<>(giveUp(make), true);
            } else if (unconfirmed != null && unconfirmed.held.kind() == kind) {
                // an earlier call of this grant's release timed out: wait for the same release
                return new ReleaseStep<>(unconfirmed, false);
            }
            return null;
        }
    }

    /** Under {@link #mon}, in state HELD: gives the held grant up and makes its release the unconfirmed one. */
    private QueueRelease<G> giveUp(Function<HeldGrant<G>, QueueRelease<G>> make) {
        assert Thread.holdsLock(mon);
        QueueRelease<G> r = make.apply(held);
        unconfirmed = r;
        state = state.to(GrantState.IDLE);
        held = null;
        return r;
    }

    /** @return whether a release of this service is unconfirmed */
    boolean releaseUnconfirmed() {
        synchronized (mon) {
            return unconfirmed != null;
        }
    }

    /** A release's caller reported {@code cause}: if it is the loss of a held grant, it is reported now. */
    void reported(Throwable cause) {
        synchronized (mon) {
            if (cause == loss) {
                lostHeld = false;
            }
        }
    }

    /** @return the acquisition in progress, which may now go on: {@code r} is confirmed */
    QueueAttempt<G> confirmed(QueueRelease<G> r) {
        synchronized (mon) {
            if (unconfirmed == r) {
                unconfirmed = null;
            }
            return pending;
        }
    }

    /** {@code r} is over, whatever its outcome: it is not the unconfirmed release any more. */
    void over(QueueRelease<G> r) {
        synchronized (mon) {
            if (unconfirmed == r) {
                unconfirmed = null;
            }
        }
    }

    /**
     * ZooKeeper refused {@code r}'s delete for good: if nothing of it can have been applied and no caller was told
     * that the grant is given up (its caller still waits, nothing else began), the grant is held again.
     *
     * @return whether it is held again
     */
    boolean holdAgain(QueueRelease<G> r) {
        synchronized (mon) {
            if (unconfirmed != r || r.givenUp() || r.maybeApplied() || state != GrantState.IDLE || pending != null) {
                return false;
            }
            unconfirmed = null;
            state = state.to(GrantState.HELD);
            held = r.held;
            return true;
        }
    }

    /** @return the state, and the unconfirmed release if any, for {@code toString} */
    String describe() {
        synchronized (mon) {
            return state + (unconfirmed != null ? ", " + unconfirmed + " unconfirmed" : "");
        }
    }

    // ------------------------------------------------------------------ the endings

    /**
     * Closes the service: the held grant is given up (released by {@code make}; if its release cannot even be made,
     * {@code unreleasable} deletes its node), the acquisition in progress is left to withdraw.
     *
     * @return what is left to do; null if the service was closed already
     */
    Closing<G> close(Function<HeldGrant<G>, QueueRelease<G>> make, Consumer<String> unreleasable) {
        synchronized (mon) {
            if (state == GrantState.CLOSED) {
                return null;
            }
            QueueAttempt<G> a = pending;
            pending = null;
            boolean first = false;
            if (state == GrantState.HELD) {
                QueueRelease<G> made = null;
                try {
                    made = giveUp(make);
                } catch (DiscoException e) {
                    unreleasable.accept(held.node()); // a slot left behind is taken over once this node is gone
                }
                first = made != null;
            }
            QueueRelease<G> r = unconfirmed;
            state = state.to(GrantState.CLOSED);
            held = null;
            return new Closing<>(a, r, first);
        }
    }

    /**
     * The loss of the service, made by {@code lost}; a held grant (or a release whose caller was told it is
     * unconfirmed) reports it at the next release call.
     *
     * @return what is left to do; null if the service was closed or lost already
     */
    Ending<G, E> lose(Supplier<E> lost) {
        synchronized (mon) {
            if (state.finished()) {
                return null;
            }
            loss = lost.get();
            QueueRelease<G> r = unconfirmed;
            unconfirmed = null;
            // a release whose caller was told it is unconfirmed reports the loss at the next release call
            lostHeld = state == GrantState.HELD || r != null && r.givenUp();
            String node = held == null ? null : held.node();
            QueueAttempt<G> a = pending;
            pending = null;
            state = state.to(GrantState.LOST);
            held = null;
            return new Ending<>(loss, a, node, r);
        }
    }

    /** @return whose node {@code node} is: the unconfirmed release's, the held grant's, or neither */
    NodeGone<G> nodeGone(String node) {
        synchronized (mon) {
            QueueRelease<G> r = unconfirmed != null && unconfirmed.node.equals(node) ? unconfirmed : null;
            return new NodeGone<>(r, state == GrantState.HELD && node.equals(held.node()));
        }
    }
}
