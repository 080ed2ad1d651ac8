package io.disco.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one run left behind, parsed once for the checkers: the resource's operations, the owners'
 * events, the nemesis' faults, and the holds the owners reported. All times are {@code System.nanoTime()}
 * of the process that wrote them: on Linux the monotonic clock that the processes of one host share.
 *
 * @param ops the resource's history, in the order it admitted the operations
 * @param events the owners' events, in the order they were read
 * @param faults what the nemesis did
 * @param keysLeft holder keys under the workload's name after every owner closed
 * @param endNanos when the nemesis stopped and the owners were asked to close
 */
record Observations(List<Op> ops, List<Event> events, List<Fault> faults, long keysLeft, long endNanos) {

    /** The mode of a grant: exclusive (a lock, a leader, a writer, a permit on its slot) or shared (a reader). */
    static final String EXCLUSIVE = "W";

    static final String SHARED = "R";

    /**
     * One operation at the resource: a line {@code nanos op key owner token outcome expect value previous}.
     *
     * @param op {@code R} or {@code W}
     * @param key the register (and guard) the operation was on
     * @param outcome {@code ok}, {@code stale}, {@code drain}, {@code unissued} (a token above etcd's
     *     revision) or {@code unconfirmed} (etcd could not confirm a new token in time)
     * @param expect for a write, the value the owner had read; else -1
     * @param value for a write, the value written; for a read, the value read
     * @param previous the register's value before the operation
     */
    record Op(
            long nanos,
            String op,
            String key,
            String owner,
            long token,
            String outcome,
            long expect,
            long value,
            long previous) {

        boolean accepted() {
            return outcome.equals("ok");
        }

        boolean write() {
            return op.equals("W");
        }

        static Op parse(String line) {
            String[] f = line.split(" ");
            if (f.length < 9) {
                return null;
            }
            return new Op(
                    Long.parseLong(f[0]),
                    f[1],
                    f[2],
                    f[3],
                    Long.parseLong(f[4]),
                    f[5],
                    number(f[6]),
                    number(f[7]),
                    number(f[8]));
        }

        private static long number(String s) {
            return s.equals("-") ? -1 : Long.parseLong(s);
        }
    }

    /**
     * One owner event: a line {@code nanos owner TYPE args...} (see {@link Owner}). The owner is a process,
     * {@code o<i>}, or one thread of it, {@code o<i>.t<j>} (the {@link ClientLockWorkload}'s threads, which hold
     * one after another on one client); the nemesis' targets are processes ({@link #process}).
     */
    record Event(long nanos, String owner, String type, List<String> args) {

        static Event parse(String line) {
            String[] f = line.split(" ");
            if (f.length < 3 || !f[0].chars().allMatch(Character::isDigit)) {
                return null;
            }
            return new Event(Long.parseLong(f[0]), f[1], f[2], Arrays.asList(f).subList(3, f.length));
        }

        long token() {
            return Long.parseLong(args.get(0));
        }

        /** @return the owner process that printed it ({@link Observations#process}) */
        String process() {
            return Observations.process(owner);
        }
    }

    /**
     * @return the process of an owner: {@code o1} for {@code o1} and for its threads {@code o1.t2}; what the
     *     nemesis freezes, partitions or steps
     */
    static String process(String owner) {
        int dot = owner.indexOf('.');
        return dot < 0 ? owner : owner.substring(0, dot);
    }

    /**
     * One fault the nemesis injected; {@code target} is an owner id, a member, or {@code -}; {@code amount}
     * the step of a wall-clock fault in seconds, a slow link's delay in ms, a lossy link's loss in
     * percent, else 0.
     */
    record Fault(String type, String target, long startNanos, long endNanos, long amount) {

        boolean covers(long nanos) {
            return startNanos <= nanos && nanos <= endNanos;
        }
    }

    /**
     * A grant as its owner reported it: from its {@code GRANT <token> <key> <mode> [<hold id>]} to the first of
     * {@code RELEASING} (it gives the grant up: the next grant may come before its release call returns),
     * {@code CLOSING} (its service is closed, which gives the grant up), {@code DONE} (the loss signal),
     * {@code LOST}, {@code EXIT} ({@code end}); a hold still open at the
     * end of the logs ends at {@link Long#MAX_VALUE}. A thread's hold ({@code o1.t2}) also ends at its
     * process's {@code CLOSING}, {@code DONE}, {@code LOST} or {@code EXIT}.
     *
     * @param id what tells this hold from every other: the {@code GRANT}'s own (the client workload's
     *     {@code o1.t2.h7}: process, thread, the thread's seventh hold), else {@code <owner>#<n>}, the owner's
     *     n-th grant
     */
    record Hold(
            String owner, long token, String key, String mode, long fromNanos, long toNanos, String end, String id) {

        boolean overlaps(Hold other) {
            return fromNanos < other.toNanos && other.fromNanos < toNanos;
        }

        boolean shared() {
            return mode.equals(SHARED);
        }
    }

    static Observations parse(
            List<String> history, List<String> ownerLines, List<Fault> faults, long keysLeft, long endNanos) {
        List<Op> ops = history.stream().map(Op::parse).filter(o -> o != null).toList();
        List<Event> events =
                ownerLines.stream().map(Event::parse).filter(e -> e != null).toList();
        return new Observations(ops, events, List.copyOf(faults), keysLeft, endNanos);
    }

    /** @return the grants as the owners reported them, in the order they were granted */
    List<Hold> holds() {
        List<Hold> holds = new ArrayList<>();
        Map<String, Event> open = new HashMap<>();
        Map<String, String> idOf = new HashMap<>(); // GRANT event's nanos and owner -> the hold's id
        Map<String, Integer> grantsOf = new HashMap<>();
        for (Event e : events) {
            switch (e.type()) {
                case "GRANT" -> {
                    int n = grantsOf.merge(e.owner(), 1, Integer::sum);
                    idOf.put(
                            e.nanos() + " " + e.owner(),
                            e.args().size() > 3 ? e.args().get(3) : e.owner() + "#" + n);
                    Event before = open.put(e.owner(), e);
                    if (before != null) {
                        holds.add(hold(before, e.nanos(), "GRANT", idOf));
                    }
                }
                case "RELEASING", "CLOSING", "DONE", "LOST", "EXIT" -> {
                    Event g = open.remove(e.owner());
                    if (g != null) {
                        holds.add(hold(g, e.nanos(), e.type(), idOf));
                    }
                    if (!e.type().equals("RELEASING") && e.owner().equals(e.process())) {
                        // a process closing, lost or gone ends the holds of its threads
                        List<String> threads = open.keySet().stream()
                                .filter(o -> process(o).equals(e.owner()))
                                .toList();
                        for (String t : threads) {
                            holds.add(hold(open.remove(t), e.nanos(), e.type(), idOf));
                        }
                    }
                }
                default -> {}
            }
        }
        open.values().forEach(g -> holds.add(hold(g, Long.MAX_VALUE, "-", idOf)));
        holds.sort((a, b) -> Long.compare(a.fromNanos(), b.fromNanos()));
        return holds;
    }

    private static Hold hold(Event grant, long to, String end, Map<String, String> idOf) {
        return new Hold(
                grant.owner(),
                grant.token(),
                grant.args().get(1),
                grant.args().get(2),
                grant.nanos(),
                to,
                end,
                idOf.get(grant.nanos() + " " + grant.owner()));
    }

    /** @return the owner's events of {@code type} */
    List<Event> events(String type) {
        return events.stream().filter(e -> e.type().equals(type)).toList();
    }
}
