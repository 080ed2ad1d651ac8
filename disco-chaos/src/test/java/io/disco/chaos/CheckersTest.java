package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each checker fails on the history it exists to catch, and passes on the same history without the
 * flaw: small hand-written logs in the formats of {@link ResourceMain} and {@link Owner}.
 */
class CheckersTest {

    private static final long S = 1_000_000_000L;

    private static Report check(
            Checker c, List<String> history, List<String> owners, List<Observations.Fault> faults, long keysLeft) {
        Report r = new Report();
        c.check(Observations.parse(history, owners, faults, keysLeft, 100 * S), r);
        return r;
    }

    private static Report check(Checker c, List<String> history, List<String> owners) {
        return check(c, history, owners, List.of(), 0);
    }

    @Test
    void lostUpdates() {
        List<String> good = List.of("1 W main o0 5 ok 0 1 0", "2 W main o1 7 ok 1 2 1");
        assertTrue(check(new LostUpdates(), good, List.of()).passed());
        // o1 read 0 before o0's write and wrote over it (a zombie write that a broken resource let through)
        Report lost = check(new LostUpdates(), List.of("1 W main o0 5 ok 0 1 0", "2 W main o1 3 ok 0 1 1"), List.of());
        assertEquals(2, lost.figures.get("lost updates"), "the write that read a stale value, and the final value");
        // registers are separate: one write per slot is no lost update
        assertTrue(check(new LostUpdates(), List.of("1 W s#0 o0 5 ok 0 1 0", "2 W s#1 o1 6 ok 0 1 0"), List.of())
                .passed());
    }

    @Test
    void lineageTokensOnRedis() {
        LineageTokens c = new LineageTokens(2 * S);
        String row = "tokens below one granted a TTL or more earlier (Redis: a lineage below an earlier one)";
        // a late reply inside the TTL's slack, then the next lineage above both
        assertTrue(check(
                        c,
                        List.of(),
                        List.of(S + " o0 GRANT 9 main W", 2 * S + " o1 GRANT 8 main W", 5 * S + " o2 GRANT 20 main W"))
                .passed());
        // a promoted server issuing below what the lost primary handed out 3 s earlier, to another owner
        Report below = check(c, List.of(), List.of(S + " o0 GRANT 9 main W", 4 * S + " o1 GRANT 7 main W"));
        assertEquals(1, below.figures.get(row));
        // registers are separate
        assertTrue(check(c, List.of(), List.of(S + " o0 GRANT 9 a W", 4 * S + " o1 GRANT 7 b W"))
                .passed());
    }

    @Test
    void tokensAtTheResource() {
        assertTrue(check(
                        new ResourceTokens(),
                        List.of(
                                "1 R main o0 5 ok - 0 0",
                                "2 R main o1 5 ok - 0 0",
                                "3 W main o2 7 ok 0 1 0",
                                "4 W main o1 5 stale - - -"),
                        List.of())
                .passed());
        Report decreasing =
                check(new ResourceTokens(), List.of("1 W main o0 7 ok 0 1 0", "2 W main o1 5 ok 1 2 1"), List.of());
        assertEquals(1, decreasing.figures.get("tokens decreasing at the resource"));
        Report shared =
                check(new ResourceTokens(), List.of("1 W main o0 7 ok 0 1 0", "2 W main o1 7 ok 1 2 1"), List.of());
        assertEquals(1, shared.figures.get("one token written by two owners"));
        // per register: a lower token on another slot is not a decrease
        assertTrue(check(new ResourceTokens(), List.of("1 W s#0 o0 7 ok 0 1 0", "2 W s#1 o1 5 ok 0 1 0"), List.of())
                .passed());
    }

    @Test
    void grantTokens() {
        assertTrue(
                check(
                                new GrantTokens(),
                                List.of(),
                                List.of(
                                        "1 o0 GRANT 5 main R",
                                        "2 o1 GRANT 5 main R",
                                        "3 o0 GRANT 5 main R",
                                        "4 o2 GRANT 9 main W"))
                        .passed(),
                "readers of one phase share a token");
        Report twice = check(new GrantTokens(), List.of(), List.of("1 o0 GRANT 5 main W", "2 o1 GRANT 5 main W"));
        assertEquals(1, twice.figures.get("a token granted twice"));
        Report falling = check(new GrantTokens(), List.of(), List.of("1 o0 GRANT 9 main W", "2 o0 GRANT 5 main W"));
        assertEquals(1, falling.figures.get("grant tokens not rising per owner"));
    }

    @Test
    void overlappingHolds() {
        List<String> owners = List.of(
                "1000 o0 GRANT 5 main W", "2000 o1 GRANT 7 main W", "3000 o0 RELEASING 5", "4000 o1 RELEASING 7");
        Report notFrozen = check(new OverlappingHolds(), List.of(), owners);
        assertEquals(1, notFrozen.figures.get("overlapping holds, earlier owner not frozen"));
        Report frozen = check(
                new OverlappingHolds(),
                List.of(),
                owners,
                List.of(new Observations.Fault("freeze-owner", "o0", 1500, 2500, 0)),
                0);
        assertTrue(frozen.passed(), frozen.failures.toString());
        assertEquals(1, frozen.figures.get("overlapping holds, earlier owner frozen (the guard's case)"));
        assertTrue(
                check(
                                new OverlappingHolds(),
                                List.of(),
                                List.of(
                                        "1000 o0 GRANT 5 main R",
                                        "2000 o1 GRANT 5 main R",
                                        "3000 o0 RELEASING 5",
                                        "4000 o1 RELEASING 5"))
                        .passed(),
                "readers overlap readers");
        assertFalse(
                check(
                                new OverlappingHolds(),
                                List.of(),
                                List.of(
                                        "1000 o0 GRANT 5 main R",
                                        "2000 o1 GRANT 7 main W",
                                        "3000 o0 RELEASING 5",
                                        "4000 o1 RELEASING 7"))
                        .passed(),
                "a writer overlaps nobody");
        // an owner that closes its service after an error gives its grant up there, not at its session's DONE
        assertTrue(
                check(
                                new OverlappingHolds(),
                                List.of(),
                                List.of(
                                        "1000 o0 GRANT 5 main W",
                                        "2000 o0 CLOSING",
                                        "3000 o1 GRANT 7 main W",
                                        "3500 o0 ERROR DiscoException no answer",
                                        "4000 o0 DONE 1f"))
                        .passed(),
                "a hold ends when its service is closed");
    }

    private static final String SHARED =
            "one token shared by two holds (granted to, or accepted at the resource for, both)";

    @Test
    void sharedTokens() {
        // issue 44: thread t0 of o0 gives its hold up (its unlock timed out), t1 of o0 is handed the same grant and
        // token, and o1's thread is granted the lock while t1 still holds
        List<String> handedOn = List.of(
                "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                "2000 o0.t0 RELEASING 5",
                "3000 o0.t1 GRANT 5 main W o0.t1.h1",
                "4000 o1.t2 GRANT 7 main W o1.t2.h1",
                "5000 o0.t1 RELEASING 5",
                "6000 o1.t2 RELEASING 7");
        Report twoHolds = check(new SharedTokens(), List.of(), handedOn);
        assertEquals(1, twoHolds.figures.get(SHARED));
        assertEquals(1, twoHolds.figures.get("tokens granted to two holds"));
        assertFalse(twoHolds.passed());
        assertTrue(twoHolds.failures.get(0).contains("[o0.t0.h1, o0.t1.h1]"), twoHolds.failures.toString());
        // the same history with a token of its own for t1's hold
        Report distinct = check(
                new SharedTokens(),
                List.of(),
                List.of(
                        "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                        "2000 o0.t0 RELEASING 5",
                        "3000 o0.t1 GRANT 6 main W o0.t1.h1",
                        "4000 o1.t2 GRANT 7 main W o1.t2.h1",
                        "5000 o0.t1 RELEASING 6",
                        "6000 o1.t2 RELEASING 7"));
        assertTrue(distinct.passed(), distinct.failures.toString());
        assertEquals(0, distinct.figures.get(SHARED));
        assertEquals(3, distinct.figures.get("holds told apart (a hold id each)"));
        // one thread's successive holds are two holds too
        assertFalse(check(
                        new SharedTokens(),
                        List.of(),
                        List.of(
                                "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                                "2000 o0.t0 RELEASING 5",
                                "3000 o0.t0 GRANT 5 main W o0.t0.h2"))
                .passed());
        // at the resource, with no grant logged: two holds read with one token (reads: ResourceTokens counts writers)
        List<String> readByTwo = List.of("1 R main o0.t0.h1 5 ok - 0 0", "2 R main o0.t1.h1 5 ok - 0 0");
        assertTrue(check(new ResourceTokens(), readByTwo, List.of()).passed(), "no writer shares the token");
        Report atResource = check(new SharedTokens(), readByTwo, List.of());
        assertEquals(1, atResource.figures.get("tokens accepted at the resource for two holds"));
        assertFalse(atResource.passed());
        // one hold calling many times with its token, a stale call refused, and the hostile owner's: one holder each
        assertTrue(check(
                        new SharedTokens(),
                        List.of(
                                "1 R main o0 5 ok - 0 0",
                                "2 W main o0 5 ok 0 1 0",
                                "3 W main o1 5 stale - - -",
                                "4 R main hostile 5 ok - 1 1"),
                        List.of("1 o0 GRANT 5 main W"))
                .passed());
        // a read phase's readers share its token, at the grant and at the resource; a writer given it does not
        List<String> readers = List.of("1 o0 GRANT 5 main R", "2 o1 GRANT 5 main R");
        assertTrue(check(new SharedTokens(), List.of("3 R main o0 5 ok - 0 0", "4 R main o1 5 ok - 0 0"), readers)
                .passed());
        assertFalse(check(new SharedTokens(), List.of(), List.of("1 o0 GRANT 5 main R", "2 o1 GRANT 5 main W"))
                .passed());
        // registers are separate: a token per slot
        assertTrue(check(new SharedTokens(), List.of(), List.of("1 o0 GRANT 5 s#0 W", "2 o1 GRANT 5 s#1 W"))
                .passed());
    }

    @Test
    void threadsOfOneProcess() {
        // two threads of o0 overlapping: the local queue failed, whoever else froze
        List<String> overlap = List.of(
                "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                "2000 o0.t1 GRANT 7 main W o0.t1.h1",
                "3000 o0.t0 RELEASING 5",
                "4000 o0.t1 RELEASING 7");
        assertEquals(
                1,
                check(new OverlappingHolds(), List.of(), overlap)
                        .figures
                        .get("overlapping holds, earlier owner not frozen"));
        // a freeze of the process covers its threads
        Report frozen = check(
                new OverlappingHolds(),
                List.of(),
                List.of(
                        "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                        "2000 o1.t3 GRANT 7 main W o1.t3.h1",
                        "3000 o0.t0 RELEASING 5",
                        "4000 o1.t3 RELEASING 7"),
                List.of(new Observations.Fault("freeze-owner", "o0", 1500, 2500, 0)),
                0);
        assertTrue(frozen.passed(), frozen.failures.toString());
        // a thread's hold ends at its process's CLOSING (SIGTERM closes the client), and with it, its DONE
        List<Observations.Hold> holds = Observations.parse(
                        List.of(),
                        List.of(
                                "1000 o0.t0 GRANT 5 main W o0.t0.h1",
                                "2000 o0 CLOSING",
                                "3000 o1.t0 GRANT 7 main W o1.t0.h1",
                                "4000 o1.t0 DONE 7"),
                        List.of(),
                        0,
                        100 * S)
                .holds();
        assertEquals(
                List.of(2000L, 4000L),
                holds.stream().map(Observations.Hold::toNanos).toList());
        assertEquals(
                List.of("o0.t0.h1", "o1.t0.h1"),
                holds.stream().map(Observations.Hold::id).toList());
        // without an id of its own, a hold is its owner's n-th grant
        assertEquals(
                List.of("o0#1", "o0#2"),
                Observations.parse(
                                List.of(),
                                List.of("1 o0 GRANT 5 main W", "2 o0 RELEASING 5", "3 o0 GRANT 6 main W"),
                                List.of(),
                                0,
                                100 * S)
                        .holds()
                        .stream()
                        .map(Observations.Hold::id)
                        .toList());
    }

    @Test
    void doneBeforeTheNextGrant() {
        List<Observations.Fault> partition = List.of(new Observations.Fault("partition-owner", "o0", 1500, 9000, 0));
        Report late = check(
                new DoneBeforeNextGrant(),
                List.of(),
                List.of("1000 o0 GRANT 5 main W", "5000000 o1 GRANT 7 main W", "8000000 o0 DONE 1a"),
                partition,
                0);
        assertEquals(1, late.figures.get("partitioned holders whose done() came after the next grant"));
        Report onTime = check(
                new DoneBeforeNextGrant(),
                List.of(),
                List.of("1000 o0 GRANT 5 main W", "3000000 o0 DONE 1a", "5000000 o1 GRANT 7 main W"),
                partition,
                0);
        assertTrue(onTime.passed());
        assertEquals(2, onTime.figures.get("partitioned holders' done() to the next grant, ms (median)"));
        // a holder whose task ended while it was cut off gave the grant up; its DONE 40 ms later is a later term's
        Report gaveUp = check(
                new DoneBeforeNextGrant(),
                List.of(),
                List.of(
                        "1000 o0 GRANT 5 main W",
                        "2000000 o0 RELEASING 5",
                        "5000000 o1 GRANT 7 main W",
                        "9000000 o1 RELEASING 7",
                        "20000000 o0 GRANT 9 main W",
                        "40000000 o0 DONE 9"),
                partition,
                0);
        assertTrue(gaveUp.passed(), gaveUp.failures.toString());
    }

    @Test
    void clockSteps() {
        ClockSteps c = new ClockSteps(1_000_000, 10 * S);
        List<Observations.Fault> step = List.of(new Observations.Fault("step-clock-owner", "o0", 2 * S, 6 * S, 300));
        // at 3 s the run's wall clock read 1_000_000 - 7_000 ms; the owner's 300 s ahead
        List<String> seen = List.of(3 * S + " o0 CLOCK " + (1_000_000 - 7_000 + 300_000));
        Report ok = check(c, List.of(), seen, step, 0);
        assertTrue(ok.passed());
        assertEquals(1, ok.figures.get("wall-clock steps seen in the stepped owner's clock (of the steps)"));
        Report lost = check(c, List.of(), List.of(seen.get(0), 4 * S + " o0 DONE 1a"), step, 0);
        assertEquals(1, lost.figures.get("sessions lost while the owner's wall clock was stepped"));
        // every owner lost its session in that window, o1 unstepped: the cluster or the machine, not the clock
        Report everyone =
                check(c, List.of(), List.of(seen.get(0), 4 * S + " o0 DONE 1a", 4 * S + 1 + " o1 DONE 2b"), step, 0);
        assertTrue(everyone.passed(), everyone.failures.toString());
        assertEquals(
                1,
                everyone.figures.get("sessions lost during a step, by unstepped owners too (not the clock's doing)"));
    }

    @Test
    void silence() {
        Report hung = check(
                new Silence(),
                List.of(),
                List.of(
                        "1 o0 GRANT 5 main W",
                        40 * S + " o0 READ 5 200 0",
                        50 * S + " o0 CLOCK 1",
                        55 * S + " o0 EXIT"));
        assertEquals(
                1, hung.figures.get("owners silent past 30 s (hung in a call)"), "CLOCK lines are no sign of progress");
        Report frozen = check(
                new Silence(),
                List.of(),
                List.of("1 o0 GRANT 5 main W", 40 * S + " o0 READ 5 200 0", 60 * S + " o0 EXIT"),
                List.of(new Observations.Fault("freeze-owner", "o0", S, 30 * S, 0)),
                0);
        assertTrue(frozen.passed(), "the time it was frozen does not count: " + frozen.failures);
    }

    @Test
    void progressAndKeysLeft() {
        Report nothing = check(new Progress(), List.of(), List.of("1 o0 ERROR session no answer"));
        assertFalse(nothing.passed(), "no grant at all");
        Report left = check(new Progress(), List.of(), List.of("1 o0 GRANT 5 main W"), List.of(), 2);
        assertEquals(2, left.figures.get("holder keys left after every owner closed"));
        assertFalse(left.passed());
    }

    @Test
    void progressCountsABarrierPassAsProgress() {
        assertTrue(check(new Progress(), List.of(), List.of("1 o0 ENTER 7 2", "2 o0 PASS 7"))
                .passed());
    }

    /** Round 7 of a double barrier for three: all enter, pass, leave, and return together. */
    private static final List<String> ROUND = List.of(
            "10 o0 ENTER 7 3",
            "20 o1 ENTER 7 3",
            "30 o2 ENTER 7 3",
            "40 o2 PASS 7",
            "41 o0 PASS 7",
            "42 o1 PASS 7",
            "50 o0 LEAVE 7",
            "51 o1 LEAVE 7",
            "60 o2 LEAVE 7",
            "70 o0 LEFT 7",
            "71 o1 LEFT 7",
            "72 o2 LEFT 7");

    private static final String EARLY = "double barrier passes before N participants could have entered";
    private static final String PREMATURE = "double barrier leaves returned before a partner (not lost) left";
    private static final String THROUGH = "gate waits that returned while the holder kept the gate up";

    @Test
    void barrierRoundsAcceptARoundInAndOutTogether() {
        Report r = check(new BarrierRounds(), List.of(), ROUND);
        assertTrue(r.passed(), r.failures.toString());
        assertEquals(1, r.figures.get("barrier rounds opened (a participant passed)"));
        assertEquals(1, r.figures.get("barrier rounds every participant left (leave returned)"));
        assertEquals(3, r.figures.get("double barrier passes"));
        // the third entered after the opener's read began: the pass is said after the enter that completed the count
        assertTrue(check(new BarrierRounds(), List.of(), List.of("10 o0 ENTER 8 2", "20 o1 ENTER 8 2", "21 o0 PASS 8"))
                .passed());
        // a participant withdrawn at the moment the last arrived may have been counted: its withdrawal is said later
        List<String> withdrawn = List.of(
                "10 o0 ENTER 9 3", "20 o1 ENTER 9 3", "30 o2 ENTER 9 3", "35 o0 ENTER-TIMEOUT 9", "40 o1 PASS 9");
        assertTrue(check(new BarrierRounds(), List.of(), withdrawn).passed());
    }

    @Test
    void barrierRoundsRejectAPassBeforeNEntered() {
        // o0 passes when only two of three have said ENTER
        List<String> early = List.of("10 o0 ENTER 7 3", "20 o1 ENTER 7 3", "25 o0 PASS 7", "30 o2 ENTER 7 3");
        Report r = check(new BarrierRounds(), List.of(), early);
        assertEquals(1, r.figures.get(EARLY));
        assertFalse(r.passed());
        // three said ENTER, but one had withdrawn (its key gone) before the third came: at most two at once
        List<String> gone = List.of(
                "10 o0 ENTER 7 3", "20 o1 ENTER 7 3", "22 o1 ENTER-TIMEOUT 7", "30 o2 ENTER 7 3", "40 o0 PASS 7");
        assertEquals(1, check(new BarrierRounds(), List.of(), gone).figures.get(EARLY));
        // rounds are separate: round 6's entries do not open round 7
        List<String> otherRound = List.of("1 o1 ENTER 6 3", "2 o2 ENTER 6 3", "10 o0 ENTER 7 3", "20 o0 PASS 7");
        assertEquals(
                1, check(new BarrierRounds(), List.of(), otherRound).figures.get(EARLY));
    }

    @Test
    void barrierRoundsRejectALeaveThatReturnsEarly() {
        // o0's leave returns at 55, before o2 called leave at 60
        List<String> early = new java.util.ArrayList<>(ROUND);
        early.set(early.indexOf("70 o0 LEFT 7"), "55 o0 LEFT 7");
        early.sort(java.util.Comparator.comparingLong(l -> Long.parseLong(l.split(" ")[0])));
        Report r = check(new BarrierRounds(), List.of(), early);
        assertEquals(1, r.figures.get(PREMATURE));
        assertFalse(r.passed());
        // o2 never leaves, no loss, no fault: still inside when o0 and o1 returned
        List<String> never = ROUND.stream().filter(l -> !l.contains("o2 LE")).toList();
        assertEquals(2, check(new BarrierRounds(), List.of(), never).figures.get(PREMATURE));
    }

    @Test
    void barrierRoundsExcuseALostPartner() {
        // o2 passed, was frozen past its lease and told of the loss when it woke: o0 and o1 did not wait for it
        List<String> lost = List.of(
                "10 o0 ENTER 7 3",
                "20 o1 ENTER 7 3",
                "30 o2 ENTER 7 3",
                "40 o2 PASS 7",
                "41 o0 PASS 7",
                "42 o1 PASS 7",
                "50 o0 LEAVE 7",
                "51 o1 LEAVE 7",
                "70 o0 LEFT 7",
                "71 o1 LEFT 7",
                "90 o2 LEAVE 7",
                "91 o2 LOST 7 leave BarrierLostException gone");
        Report r = check(new BarrierRounds(), List.of(), lost);
        assertTrue(r.passed(), r.failures.toString());
        assertEquals(2, r.figures.get("double barrier leaves returned while a lost or closed partner had not left"));
        // a lost participant's key may outlive what its client saw: it still counts towards the entry of the others
        List<String> lostEntering = List.of(
                "10 o0 ENTER 7 3",
                "12 o0 LOST 7 enter BarrierLostException gone",
                "20 o1 ENTER 7 3",
                "30 o2 ENTER 7 3",
                "40 o1 PASS 7");
        assertEquals(
                0, check(new BarrierRounds(), List.of(), lostEntering).figures.get(EARLY));
        // o2 never left, but a fault hit its process while it was inside (the run's end closed it before it woke)
        List<String> frozen = ROUND.stream().filter(l -> !l.contains("o2 LE")).toList();
        Report excused = check(
                new BarrierRounds(),
                List.of(),
                frozen,
                List.of(new Observations.Fault("freeze-owner", "o2", 45, 80, 0)),
                0);
        assertTrue(excused.passed(), excused.failures.toString());
    }

    @Test
    void barrierRoundsRejectAWaitThroughARaisedGate() {
        List<String> gate = List.of(
                "1 o0 GATE-RAISED 7 true",
                "10 o1 AWAIT 7",
                "20 o1 AWAITED 7 true",
                "30 o0 GATE-LOWERING 7",
                "31 o0 GATE-LOWERED 7 true");
        Report r = check(new BarrierRounds(), List.of(), gate);
        assertEquals(1, r.figures.get(THROUGH));
        assertFalse(r.passed());
        // returned after the holder began lowering it, or called before the raise was said: both may be right
        List<String> good = List.of(
                "1 o0 GATE-RAISED 7 true",
                "0 o2 AWAIT 7",
                "2 o2 AWAITED 7 true",
                "10 o1 AWAIT 7",
                "30 o0 GATE-LOWERING 7",
                "32 o1 AWAITED 7 true");
        Report fine = check(new BarrierRounds(), List.of(), good);
        assertTrue(fine.passed(), fine.failures.toString());
        assertEquals(2, fine.figures.get("gate waits that returned (the gate down)"));
    }

    @Test
    void barrierRoundsCountAWaitThroughAGateARedisFailoverMayHaveLostApart() {
        List<String> gate = List.of(
                "10 o0 GATE-RAISED 7 true",
                "11 o1 AWAIT 7",
                "12 o1 AWAITED 7 true",
                "30 o0 GATE-LOWERING 7",
                "31 o0 GATE-LOWERED 7 true");
        // the primary cut off from the replicas and o1 (5), the raise on it (10), the wait on the promoted one (12);
        // the
        // run sees the promotion's config epoch later (20): the promoted primary never had the raise
        List<Observations.Fault> split = List.of(
                new Observations.Fault("split-cluster", "m0 with [o0]", 5, 25, 0),
                new Observations.Fault(RedisMembers.FAILOVER, "m1", 20, 20, 2));
        Report r = check(new BarrierRounds(), List.of(), gate, split, 0);
        assertTrue(r.passed(), r.failures.toString());
        assertEquals(
                1,
                r.figures.get("gate waits that returned across a Redis failover after the raise (permitted: a failover"
                        + " can lose it)"));
        // no failover after the raise: the same wait is a failure
        List<Observations.Fault> noFailover =
                List.of(split.get(0), new Observations.Fault(RedisMembers.FAILOVER, "m1", 8, 8, 2));
        assertFalse(check(new BarrierRounds(), List.of(), gate, noFailover, 0).passed());
    }

    @Test
    void overlappingFaultsCountTheirTimeOnce() {
        // a partition during a freeze: the inner freeze lies within its parent; 60 s of run, 20 s of it faulty
        List<Observations.Fault> nested = List.of(
                new Observations.Fault("partition-during-freeze", "-", 10 * S, 30 * S, 0),
                new Observations.Fault("freeze-owner", "o0", 12 * S, 28 * S, 0));
        List<String> grants = List.of(
                "0 o0 GRANT 1 main W",
                5 * S + " o0 GRANT 2 main W",
                20 * S + " o0 GRANT 3 main W",
                40 * S + " o0 GRANT 4 main W",
                60 * S + " o0 GRANT 5 main W");
        Report r = check(new Progress(), List.of(), grants, nested, 0);
        assertEquals(
                4 * 60 / 40, r.figures.get("grants per minute, no fault running"), "4 grants in 40 healthy seconds");
        assertEquals(60 / 20, r.figures.get("grants per minute, a fault running"), "1 grant in 20 faulty seconds");
        assertEquals(60 / 16, r.figures.get("grants per minute during freeze-owner (-1: none)"));
    }

    @Test
    void hostileRequests() {
        List<String> owners = List.of(
                "1 hostile HOSTILE 9223372036854775807 main W 400", "2 hostile HOSTILE 1099511627777 main R 503");
        List<String> refused = List.of(
                "1 W main o0 5 ok 0 1 0",
                "2 W main hostile 9223372036854775807 unissued - - -",
                "3 R main hostile 1099511627777 unconfirmed - - -");
        Report good = check(new HostileRequests(), refused, owners);
        assertTrue(good.passed(), good.failures.toString());
        assertEquals(1, good.figures.get("hostile requests refused: not issued (400)"));
        assertEquals(1, good.figures.get("hostile requests refused: etcd unreachable (503)"));
        // a resource that let one forged token through (what a guard without an issued bound does)
        Report admitted = check(
                new HostileRequests(),
                List.of("1 W main o0 5 ok 0 1 0", "2 W main hostile 9223372036854775807 ok 0 0 1"),
                List.of("2 hostile HOSTILE 9223372036854775807 main W 200"));
        assertEquals(1, admitted.figures.get("hostile requests admitted (tokens nobody issued)"));
        assertFalse(admitted.passed());
        // seen only by the hostile owner: answered 200
        assertFalse(check(new HostileRequests(), refused, List.of("1 hostile HOSTILE 9223372036854775807 main W 200"))
                .passed());
        // a run whose hostile owner sent nothing proves nothing
        Report silent = check(new HostileRequests(), List.of("1 W main o0 5 ok 0 1 0"), List.of());
        assertEquals(1, silent.figures.get("hostile owner sent no request (the check would be empty)"));
        assertFalse(silent.passed());
    }
}
