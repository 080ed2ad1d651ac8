package io.disco.client;

import io.disco.barrier.BarrierLostException;
import io.disco.barrier.DoubleBarrier;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's {@link DoubleBarrier}: one participant, whose key is on the owner of the moment when it enters (the
 * {@link Barriers.Participant} of that owner), kept until it leaves. The state moves by checked transitions only
 * ({@link #move}), so two threads can never both enter or leave one participant.
 */
final class ClientDoubleBarrier implements DoubleBarrier {

    private static final Logger LOG = LoggerFactory.getLogger(ClientDoubleBarrier.class);

    private final String name;
    private final int participants;
    private final CurrentOwner owner;
    private final AtomicReference<State> state = new AtomicReference<>(State.OUTSIDE);
    /** The owner the participant entered through, and its steps: set while entering or inside. */
    private volatile DiscoBackend.Owner through;

    private volatile Barriers.Participant seat;

    ClientDoubleBarrier(String name, int participants, CurrentOwner owner) {
        this.name = name;
        this.participants = participants;
        this.owner = owner;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int participants() {
        return participants;
    }

    @Override
    public State state() {
        return state.get();
    }

    /** Moves the state from {@code from} to {@code to}, or throws naming the state it is in. */
    private void move(State from, State to) {
        State now = state.get();
        if (now != from || !state.compareAndSet(from, to)) {
            throw new IllegalStateException("double barrier '" + name + "' participant is " + state.get() + ", not "
                    + from + " (" + from + " -> " + to + ")");
        }
    }

    @Override
    public void enter() throws InterruptedException {
        enterUntil(Long.MAX_VALUE);
    }

    @Override
    public boolean enter(Duration timeout) throws InterruptedException {
        return enterUntil(OwnerRace.deadline(timeout));
    }

    private boolean enterUntil(long deadline) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        owner.requireOpen();
        move(State.OUTSIDE, State.ENTERING);
        boolean inside = false;
        try {
            DiscoBackend.Owner o;
            try {
                o = Wait.INTERRUPTIBLY.await(owner.owner(), deadline);
            } catch (TimeoutException e) {
                return false;
            }
            Barriers.Participant p = o.barriers().participant(name, participants);
            through = o;
            seat = p;
            try {
                inside = OwnerRace.await(p.enter(), o, deadline);
            } catch (TimeoutException e) {
                inside = !withdrawn(p, o); // not withdrawn: the barrier opened meanwhile
                return inside;
            } catch (InterruptedException e) {
                if (!withdrawn(p, o)) {
                    removeLater(p, o); // it opened meanwhile: leave at once rather than stay inside unknown
                }
                throw e;
            } catch (RuntimeException e) {
                removeLater(p, o); // a failure after the key was made must not leave it counted
                throw e;
            }
            if (!inside) {
                throw ended(o, "entering");
            }
            return true;
        } finally {
            if (inside) {
                move(State.ENTERING, State.INSIDE);
            } else {
                reset(State.ENTERING);
            }
        }
    }

    @Override
    public void leave() throws InterruptedException {
        leaveUntil(Long.MAX_VALUE);
    }

    @Override
    public boolean leave(Duration timeout) throws InterruptedException {
        return leaveUntil(OwnerRace.deadline(timeout));
    }

    private boolean leaveUntil(long deadline) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        move(State.INSIDE, State.LEAVING);
        try {
            DiscoBackend.Owner o = through;
            Barriers.Participant p = seat;
            if (o.done().toCompletableFuture().isDone()) {
                throw ended(o, "inside");
            }
            boolean left;
            try {
                left = OwnerRace.await(p.leave(), o, deadline);
            } catch (TimeoutException e) {
                removeLater(p, o);
                return false;
            } catch (InterruptedException | RuntimeException e) {
                removeLater(p, o); // a leave cut short, or failed, must not leave the key counted
                throw e;
            }
            if (!left) {
                throw ended(o, "leaving");
            }
            return true;
        } finally {
            reset(State.LEAVING);
        }
    }

    /** Back outside from {@code from}, the participant's owner and steps forgotten. */
    private void reset(State from) {
        through = null;
        seat = null;
        move(from, State.OUTSIDE);
    }

    /**
     * The participant's owner ended while it was {@code where}: the client closed (its close ended it), or the owner
     * was lost, and the participant with it.
     */
    private RuntimeException ended(DiscoBackend.Owner o, String where) {
        owner.requireOpen();
        return new BarrierLostException(
                "double barrier '" + name + "': the participant's owner (" + o.describe() + ") was lost while " + where
                        + "; its key is gone, the others no longer count it",
                o.err().orElse(null));
    }

    /**
     * Withdraws after an enter given up, waiting (not interruptibly) for the answer, which the backend gives within
     * its request timeout. If the owner ended meanwhile, it took the key with it: a failure then is an answer too.
     *
     * @return whether withdrawn; false if the barrier had opened (the participant is inside)
     * @throws DiscoException if the withdrawal failed while the owner lives (the key is then removed in the background)
     */
    private boolean withdrawn(Barriers.Participant p, DiscoBackend.Owner o) {
        boolean interrupted = Thread.interrupted();
        try {
            return p.withdraw().join();
        } catch (RuntimeException failed) {
            if (o.done().toCompletableFuture().isDone()) {
                return true;
            }
            removeLater(p, o);
            throw new DiscoException(
                    "double barrier '" + name + "': the participant could not be withdrawn; its key is being removed",
                    failed);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Removes the participant's key in the background (the backend retries it; the key goes with the owner anyway):
     * after a leave cut short or failed, or an enter that failed, the caller is not kept waiting for it, and the handle
     * is outside at once.
     */
    private void removeLater(Barriers.Participant p, DiscoBackend.Owner o) {
        p.remove().whenComplete((v, failed) -> {
            if (failed != null && !o.done().toCompletableFuture().isDone()) {
                LOG.warn(
                        "double barrier '{}': a participant's key could not be removed ({}); the others count it until"
                                + " the client's owner ({}) ends",
                        name,
                        failed.toString(),
                        o.describe());
            }
        });
    }

    @Override
    public String toString() {
        return "DoubleBarrier[" + name + ", " + participants + " participants, " + state.get() + "]";
    }
}
