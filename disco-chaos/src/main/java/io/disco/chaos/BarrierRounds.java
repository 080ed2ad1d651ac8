package io.disco.chaos;

import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checker of the {@link BarrierWorkload}: the double barrier lets nobody in before its participants entered and
 * nobody out before they all left, and the gate lets no waiter through while its holder keeps it up. Events are
 * matched per round ({@code <r>}, a barrier of its own) and per owner process (one participant each per round); all
 * times are the processes' {@link System#nanoTime()} (the host's monotonic clock, which the nemesis' wall-clock steps
 * leave alone), and every rule reads them the way that can only excuse: a call's start is said before the call, its
 * end after it returned, so the real call lies inside the recorded interval.
 *
 * <ul>
 *   <li><b>No pass before N entered.</b> A {@code PASS <r>} at {@code t} needs a moment {@code x ≤ t} at which
 *       {@code N} participants of round {@code r} (N from their {@code ENTER <r> <N>}) may all have been registered:
 *       each said {@code ENTER} at or before {@code x}, and none had, before {@code x}, said what proves its key gone:
 *       {@code ENTER-TIMEOUT} (withdrawn, no key left), {@code REFUSED} (no key left), {@code LEFT} or
 *       {@code LEAVE-TIMEOUT} (its key removed). A participant told of a loss ({@code LOST}) or whose call failed
 *       ({@code ERROR}) still counts: its key may outlive what its client saw (a lease ends at the server after the
 *       client gave it up, a failed removal leaves the key until the owner ends).</li>
 *   <li><b>No leave before all left.</b> A {@code LEFT <r>} at {@code t} (leave returned true) fails if another
 *       participant that passed round {@code r} said {@code LEAVE <r>} only after {@code t}, or never, and is not
 *       excused: a participant told of a loss in the round ({@code LOST <r>}: a lost participant counts as left,
 *       whenever its client heard of it), one whose process closed its client ({@code CLOSING} or {@code EXIT}, which
 *       remove its key) at or before {@code t}, or one that never left and whose process a fault hit between its
 *       {@code ENTER} and {@code t} (its lease may have ended unseen before the run's end closed it).</li>
 *   <li><b>No wait through a raised gate.</b> An {@code AWAITED <r> true} fails if its {@code AWAIT <r>} came after
 *       the round's {@code GATE-RAISED <r>} and it returned before the holder's {@code GATE-LOWERING <r>} (or the
 *       holder never lowered it): the gate's key has no lease and only its holder lowers it, each round's gate once,
 *       so it was up all along. A raise whose call failed is not said raised: nothing is judged then. On Redis, a wait
 *       that returned once the fault behind a failover seen after the raise had begun is counted apart: the promoted
 *       primary may never have had the raise.</li>
 * </ul>
 * Printed beside: how many rounds opened and how many every participant left, the passes, withdrawals, refusals,
 * losses and leaves that timed out, and the gate's waits.
 */
final class BarrierRounds implements Checker {

    /** The event of a participant that passed the double barrier (its {@code enter} returned true). */
    static final String PASS = "PASS";

    /** One owner process's participant in one round: the times it said each event, or null. */
    private static final class Seat {
        final String owner;
        int participants;
        Long enter;
        Long pass;
        Long leave;
        Long left;
        Long lost;
        /** The first event that proves its key gone. */
        Long gone;

        Seat(String owner) {
            this.owner = owner;
        }
    }

    /** One round's gate: when its holder said it raised and lowering, and its waiters' waits. */
    private static final class Gate {
        Long raised;
        Long lowering;
        final Map<String, Long> awaitOf = new HashMap<>();
    }

    @Override
    public void check(Observations o, Report r) {
        Map<String, Map<String, Seat>> rounds = new LinkedHashMap<>();
        Map<String, Gate> gates = new HashMap<>();
        Map<String, Long> closedOf = new HashMap<>(); // process -> its first CLOSING or EXIT
        long awaited = 0;
        long awaitTimeouts = 0;
        long throughRaised = 0;
        long throughFailover = 0;
        String firstGate = null;
        // the owners' lines come in the order they were read, process by process: put them in the order of their times
        List<Observations.Event> events = o.events().stream()
                .sorted(Comparator.comparingLong(Observations.Event::nanos))
                .toList();
        for (Observations.Event e : events) {
            String type = e.type();
            if (type.equals("CLOSING") || type.equals("EXIT")) {
                closedOf.putIfAbsent(e.process(), e.nanos());
                continue;
            }
            if (e.args().isEmpty()) {
                continue;
            }
            String round = e.args().get(0);
            switch (type) {
                case "GATE-RAISED" -> gate(gates, round).raised = first(gate(gates, round).raised, e.nanos());
                case "GATE-LOWERING" -> gate(gates, round).lowering = first(gate(gates, round).lowering, e.nanos());
                case "AWAIT" -> gate(gates, round).awaitOf.put(e.owner(), e.nanos());
                case "AWAITED" -> {
                    Gate g = gate(gates, round);
                    Long asked = g.awaitOf.get(e.owner());
                    if (!e.args().get(1).equals("true")) {
                        awaitTimeouts++;
                    } else {
                        awaited++;
                        long returned = e.nanos();
                        if (asked != null
                                && g.raised != null
                                && g.raised <= asked
                                && (g.lowering == null || g.lowering >= returned)
                                && acrossFailover(o, g.raised, returned)) {
                            throughFailover++;
                        } else if (asked != null
                                && g.raised != null
                                && g.raised <= asked
                                && (g.lowering == null || g.lowering >= returned)) {
                            throughRaised++;
                            firstGate = firstGate == null
                                    ? e + " (awaited from " + asked + "; raised at " + g.raised + ", lowering at "
                                            + g.lowering + ")"
                                    : firstGate;
                        }
                    }
                }
                case "ENTER" -> {
                    Seat s = seat(rounds, round, e.owner());
                    s.enter = e.nanos();
                    s.participants = Integer.parseInt(e.args().get(1));
                }
                case PASS -> seat(rounds, round, e.owner()).pass = e.nanos();
                case "LEAVE" -> seat(rounds, round, e.owner()).leave = e.nanos();
                case "LEFT" -> {
                    Seat s = seat(rounds, round, e.owner());
                    s.left = e.nanos();
                    s.gone = first(s.gone, e.nanos());
                }
                case "ENTER-TIMEOUT", "REFUSED", "LEAVE-TIMEOUT" -> {
                    Seat s = seat(rounds, round, e.owner());
                    s.gone = first(s.gone, e.nanos());
                }
                case "LOST" -> {
                    if (rounds.containsKey(round)) {
                        Seat s = seat(rounds, round, e.owner());
                        s.lost = first(s.lost, e.nanos());
                    }
                }
                default -> {}
            }
        }
        long opened = 0;
        long together = 0;
        long passes = 0;
        long early = 0;
        long premature = 0;
        long excused = 0;
        String firstEarly = null;
        String firstPremature = null;
        for (Map.Entry<String, Map<String, Seat>> round : rounds.entrySet()) {
            List<Seat> seats = List.copyOf(round.getValue().values());
            long passed = seats.stream().filter(s -> s.pass != null).count();
            passes += passed;
            if (passed > 0) {
                opened++;
                int n = seats.stream().mapToInt(s -> s.participants).max().orElse(0);
                if (seats.stream().filter(s -> s.left != null).count() >= n) {
                    together++;
                }
            }
            for (Seat q : seats) {
                if (q.pass != null && mostRegistered(seats, q.pass) < q.participants) {
                    early++;
                    firstEarly = firstEarly == null
                            ? q.owner + " passed round " + round.getKey() + " at " + q.pass + " with at most "
                                    + mostRegistered(seats, q.pass) + " of " + q.participants + " registered"
                            : firstEarly;
                }
                if (q.left == null) {
                    continue;
                }
                for (Seat a : seats) {
                    if (a == q || a.pass == null || a.leave != null && a.leave <= q.left) {
                        continue;
                    }
                    if (excused(o, a, q.left, closedOf)) {
                        excused++;
                    } else {
                        premature++;
                        firstPremature = firstPremature == null
                                ? q.owner + " returned from leave() in round " + round.getKey() + " at " + q.left
                                        + " while " + a.owner + " (passed at " + a.pass + ") "
                                        + (a.leave == null ? "never left" : "left only at " + a.leave)
                                : firstPremature;
                    }
                }
            }
        }
        r.figure("barrier rounds opened (a participant passed)", opened);
        r.figure("barrier rounds every participant left (leave returned)", together);
        r.figure("double barrier passes", passes);
        r.figure("double barrier enters withdrawn (timed out)", count(o, "ENTER-TIMEOUT"));
        r.figure("double barrier enters refused (too many registered)", count(o, "REFUSED"));
        r.figure("double barrier participants told of a loss", count(o, "LOST"));
        r.figure("double barrier leaves timed out", count(o, "LEAVE-TIMEOUT"));
        r.figure("double barrier leaves returned while a lost or closed partner had not left", excused);
        r.figure("gate waits that returned (the gate down)", awaited);
        r.figure("gate waits that timed out (the gate still up)", awaitTimeouts);
        r.safety("double barrier passes before N participants could have entered", early, firstEarly);
        r.safety("double barrier leaves returned before a partner (not lost) left", premature, firstPremature);
        r.figure(
                "gate waits that returned across a Redis failover after the raise (permitted: a failover can lose it)",
                throughFailover);
        r.safety("gate waits that returned while the holder kept the gate up", throughRaised, firstGate);
    }

    /**
     * @return the most participants that may all have been registered at once at some moment up to {@code t}: the
     *     count is highest at an {@code ENTER}, so only those are tried
     */
    private static int mostRegistered(List<Seat> seats, long t) {
        int most = 0;
        for (Seat x : seats) {
            if (x.enter == null || x.enter > t) {
                continue;
            }
            long at = x.enter;
            int registered = (int) seats.stream()
                    .filter(s -> s.enter != null && s.enter <= at && (s.gone == null || s.gone > at))
                    .count();
            most = Math.max(most, registered);
        }
        return most;
    }

    /**
     * @return whether partner {@code a}, which had not said {@code LEAVE} by {@code t}, may have been gone then: told
     *     of a loss in the round, its client closed by {@code t}, or (never left) its process hit by a fault between its
     *     {@code ENTER} and {@code t}
     */
    private static boolean excused(Observations o, Seat a, long t, Map<String, Long> closedOf) {
        if (a.lost != null) {
            return true;
        }
        Long closed = closedOf.get(Observations.process(a.owner));
        if (closed != null && closed <= t) {
            return true;
        }
        long from = a.enter != null ? a.enter : a.pass;
        return a.leave == null
                && o.faults().stream()
                        .anyMatch(x -> x.target().equals(Observations.process(a.owner))
                                && x.startNanos() <= t
                                && x.endNanos() >= from);
    }

    private static long count(Observations o, String type) {
        return o.events(type).size();
    }

    private static Long first(Long before, long now) {
        return before == null ? now : before;
    }

    private static Seat seat(Map<String, Map<String, Seat>> rounds, String round, String owner) {
        return rounds.computeIfAbsent(round, k -> new LinkedHashMap<>()).computeIfAbsent(owner, Seat::new);
    }

    private static Gate gate(Map<String, Gate> gates, String round) {
        return gates.computeIfAbsent(round, k -> new Gate());
    }

    /**
     * Whether the wait may have read a Redis primary that never had the raise: a failover was seen after the raise,
     * and the fault that led to it (the last one dealt before the failover was seen) began before the wait returned.
     * The sentinels promote a replica some time after that fault began, before the run sees the new config epoch; a
     * raise acknowledged by the old primary meanwhile may not have reached the new one (Redis replicates
     * asynchronously; docs/redis.md, "What is not guaranteed"), so the gate was down there.
     */
    private static boolean acrossFailover(Observations o, long raised, long returned) {
        for (Observations.Fault x : o.faults()) {
            if (!x.type().equals(RedisMembers.FAILOVER) || x.startNanos() <= raised) {
                continue;
            }
            long cause = o.faults().stream()
                    .filter(f -> !f.type().equals(RedisMembers.FAILOVER) && f.startNanos() < x.startNanos())
                    .mapToLong(Observations.Fault::startNanos)
                    .max()
                    .orElse(Long.MAX_VALUE);
            if (cause < returned) {
                return true;
            }
        }
        return false;
    }
}
