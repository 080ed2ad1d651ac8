package io.disco.chaos;

import io.disco.barrier.Barrier;
import io.disco.barrier.BarrierLostException;
import io.disco.barrier.DoubleBarrier;
import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.DiscoException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The barrier workload: each owner process builds one {@link Disco} ({@code Disco.healing} over
 * {@link OwnerBackend#of}, as the {@link ClientLockWorkload}) and runs rounds of a gate ({@link Barrier}) and a double
 * barrier ({@link DoubleBarrier}) for all the run's owners ({@link Owner#owners}); {@link BarrierRounds} judges them.
 *
 * <p><b>Rounds.</b> Round {@code r} is the slot {@code [r × SLOT, (r + 1) × SLOT)} of the monotonic clock
 * ({@link System#nanoTime()}, which the processes of one host share and the nemesis' wall-clock steps leave alone), and
 * uses barriers of its own, {@code <name>-rounds/gate/<r>} and {@code <name>-rounds/round/<r>}: a fresh double barrier
 * per round, so a round that a fault cut short (a participant frozen, keys left until their lease ends, an open mark
 * nobody removed) never spills into the next, and the double barrier's refusal of a newcomer while a round still
 * leaves does not arise; a process that falls behind (frozen, its calls slow) rejoins at the next slot that has not
 * begun. The barriers are outside {@code <name>/}, whose keys the run counts as holder keys left after the owners
 * closed: a gate and a round's open mark are keys without a lease (the recipes' choice, {@link Barrier}), which a
 * round cut short leaves behind by design.
 *
 * <p><b>A round</b>, {@code o<r mod owners>} being its gate holder:
 * <ol>
 *   <li>at the slot's start the holder raises the gate ({@code GATE-RAISED <r> <true|false>} once {@code hold()}
 *       returned); at {@value #AWAIT_AT_MILLIS} ms the others {@code await} it ({@code AWAIT <r>} before the call,
 *       {@code AWAITED <r> <true|false>} after it, bounded by the slot's {@value #AWAIT_UNTIL_MILLIS} ms); at
 *       {@value #LOWER_AT_MILLIS} ms the holder lowers it ({@code GATE-LOWERING <r>} before {@code release()},
 *       {@code GATE-LOWERED <r> <true|false>} after);</li>
 *   <li>then every owner enters the round's double barrier for {@code owners} participants ({@code ENTER <r> <owners>} before
 *       the call, bounded by the slot's {@value #ENTER_UNTIL_MILLIS} ms; then {@code PASS <r>}, or
 *       {@code ENTER-TIMEOUT <r>} when it withdrew, or {@code REFUSED <r>}), works the run's work time inside, and
 *       leaves ({@code LEAVE <r>} before the call, bounded by 2 × TTL + 1 s so that a lost partner's key can run out;
 *       then {@code LEFT <r>}, or {@code LEAVE-TIMEOUT <r>}).</li>
 * </ol>
 * A {@link BarrierLostException} is said {@code LOST <r> enter|leave ...}, another failure {@code ERROR <r> <step>
 * ...}; each ends the owner's part of the round. The process's close (SIGTERM) is said {@code CLOSING} by
 * {@link Owner} before the client's close removes its participant.
 */
final class BarrierWorkload implements Workload {

    /** The length of a round, ms. */
    static final long SLOT_MILLIS = 1000;
    /** When in its round a waiter awaits the gate, ms. */
    static final long AWAIT_AT_MILLIS = 100;
    /** When in its round the gate holder lowers the gate, ms. */
    static final long LOWER_AT_MILLIS = 300;
    /** When in its round a waiter stops awaiting the gate, ms. */
    static final long AWAIT_UNTIL_MILLIS = 600;
    /** When in its round an owner stops waiting to enter the double barrier, ms. */
    static final long ENTER_UNTIL_MILLIS = 900;

    private static final long SLOT = TimeUnit.MILLISECONDS.toNanos(SLOT_MILLIS);

    @Override
    public String name() {
        return "barrier";
    }

    @Override
    public List<Checker> checkers() {
        return List.of(new BarrierRounds());
    }

    @Override
    public void own(Owner owner) throws Exception {
        Disco disco = Disco.healing(owner.backend);
        owner.closeOnExit(disco);
        int me = Integer.parseInt(owner.id.substring(1));
        String base = owner.name + "-rounds";
        Duration leave = owner.ttl.multipliedBy(2).plusSeconds(1);
        long round = Math.floorDiv(System.nanoTime(), SLOT) + 1;
        while (disco.status().state() != DiscoStatus.State.CLOSED) {
            long start = round * SLOT;
            until(start);
            String r = Long.toString(round);
            try {
                Barrier gate = disco.barrier(base + "/gate/" + r);
                if (round % owner.owners == me) {
                    hold(owner, gate, r, start);
                } else {
                    await(owner, gate, r, start);
                }
                batch(owner, disco.doubleBarrier(base + "/round/" + r, owner.owners), r, start, leave);
            } catch (IllegalStateException e) {
                if (disco.status().state() == DiscoStatus.State.CLOSED) {
                    return; // SIGTERM closed the client: the process is ending
                }
                throw e;
            }
            round = Math.max(round + 1, Math.floorDiv(System.nanoTime(), SLOT) + 1);
        }
    }

    /** The gate holder's part: raise at the round's start, lower at {@value #LOWER_AT_MILLIS} ms. */
    private static void hold(Owner owner, Barrier gate, String r, long start) throws InterruptedException {
        try {
            owner.say("GATE-RAISED " + r + " " + gate.hold());
        } catch (RuntimeException e) {
            said(owner, r, "raise", e); // its outcome unknown: it is lowered all the same
        }
        until(start + TimeUnit.MILLISECONDS.toNanos(LOWER_AT_MILLIS));
        owner.say("GATE-LOWERING " + r);
        try {
            owner.say("GATE-LOWERED " + r + " " + gate.release());
        } catch (RuntimeException e) {
            said(owner, r, "lower", e); // the gate may stay up: the waiters' awaits run out
        }
    }

    /** A waiter's part: await the gate from {@value #AWAIT_AT_MILLIS} ms to {@value #AWAIT_UNTIL_MILLIS} ms. */
    private static void await(Owner owner, Barrier gate, String r, long start) throws InterruptedException {
        until(start + TimeUnit.MILLISECONDS.toNanos(AWAIT_AT_MILLIS));
        owner.say("AWAIT " + r);
        try {
            boolean down = gate.await(
                    Duration.ofNanos(start + TimeUnit.MILLISECONDS.toNanos(AWAIT_UNTIL_MILLIS) - System.nanoTime()));
            owner.say("AWAITED " + r + " " + down);
        } catch (RuntimeException e) {
            said(owner, r, "await", e);
        }
    }

    /** Every owner's part: enter the round's double barrier, work inside, leave. */
    private static void batch(Owner owner, DoubleBarrier round, String r, long start, Duration leave)
            throws InterruptedException {
        owner.say("ENTER " + r + " " + round.participants());
        try {
            boolean in = round.enter(
                    Duration.ofNanos(start + TimeUnit.MILLISECONDS.toNanos(ENTER_UNTIL_MILLIS) - System.nanoTime()));
            if (!in) {
                owner.say("ENTER-TIMEOUT " + r);
                return;
            }
        } catch (IllegalStateException e) {
            if (e.getMessage() != null && e.getMessage().contains("refused")) {
                owner.say("REFUSED " + r + " " + e.getMessage());
            } else {
                said(owner, r, "enter", e); // the client closed (SIGTERM), or a state the workload never makes
            }
            return;
        } catch (RuntimeException e) {
            said(owner, r, "enter", e);
            return;
        }
        owner.say("PASS " + r);
        owner.work();
        owner.say("LEAVE " + r);
        try {
            owner.say((round.leave(leave) ? "LEFT " : "LEAVE-TIMEOUT ") + r);
        } catch (RuntimeException e) {
            said(owner, r, "leave", e);
        }
    }

    /**
     * Says a failed call: {@code LOST <r> <step> ...} for a {@link BarrierLostException} (the participant is no longer
     * counted), else {@code ERROR <r> <step> ...} (a backend failure: a {@link DiscoException}; the client closed).
     */
    private static void said(Owner owner, String r, String step, RuntimeException e) {
        owner.say((e instanceof BarrierLostException ? "LOST " : "ERROR ") + r + " " + step + " "
                + e.getClass().getSimpleName() + " " + e.getMessage());
    }

    /**
     * Waits until the monotonic clock reads {@code nanos}: the round's schedule is a point in time, not an event any
     * call could await.
     */
    private static void until(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
