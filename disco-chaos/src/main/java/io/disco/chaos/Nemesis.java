package io.disco.chaos;

import io.disco.testservers.FakeClock;
import io.disco.testservers.MemberNetwork;
import io.disco.testservers.TcpProxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * Injects one fault at a time, healing in between, chosen with the run's seed:
 * <ul>
 *   <li>{@code freeze-owner}: SIGSTOP an owner for 1.5–3 × TTL;</li>
 *   <li>{@code partition-owner}: blackhole an owner's proxies (connections held open, nothing
 *       forwarded) for 1.5–3 × TTL;</li>
 *   <li>{@code kill-member}: kill -9 a member (etcd or ZooKeeper, {@link Members}) and start it again 0.5–1.5 s later;</li>
 *   <li>{@code freeze-member}: SIGSTOP a member for 0.3–1 s (under a renewal's margin);</li>
 *   <li>{@value #FREEZE_ALL}: SIGSTOP every member (etcd or ZooKeeper) at once, all of them frozen together
 *       for longer than the owners' request timeout and each for less than their TTL ({@link #freezeAllNanos}),
 *       then SIGCONT them all: a release or a renewal sent just before or during the freeze times out at the
 *       owner and is applied when the members wake, while the owners' leases or sessions may still be valid
 *       (issue 44: a client's unlock that timed out so left its grant to the next thread of the process);</li>
 *   <li>the member is the leader every other time (its target then reads {@code m<i>-leader});</li>
 *   <li>{@code compact}: compact etcd to the current revision (etcd only: ZooKeeper has no history);</li>
 *   <li>{@code step-clock-owner}: step an owner's wall clock by 1–10 minutes, forward or back, for
 *       1.5–3 × TTL, then back (its monotonic clock untouched).</li>
 * </ul>
 * With a {@link MemberNetwork} (each member in a network namespace of its own), the partitions of
 * {@link NetworkFaults}, and its peer-link faults where the members' peer ports are behind proxies
 * ({@link Members#peerLinks()}). On a Sentinel-managed Redis ({@link RedisMembers}), the failover kinds of
 * {@link RedisFaults}, and the member partitions when its data servers and sentinels run in namespaces (a cut
 * primary's isolation lasting past the promotion of a replica).
 * On the owners' proxies ({@link TcpProxy.Link}), without namespaces, for 1.5–3 × TTL:
 * <ul>
 *   <li>{@code slow-link}: an owner's links delayed 20–200 ms (its amount), jitter up to half that;</li>
 *   <li>{@code lossy-link}: an owner's links lose 1–10 % of their chunks (its amount), each loss a
 *       200–600 ms stall of the stream behind it;</li>
 *   <li>{@code slow-during-leader-kill}: every owner's links delayed 20–200 ms while the leader is
 *       killed and restarted.</li>
 * </ul>
 * Every fault is healed in a {@code finally}: an exception in the nemesis leaves no cut behind.
 * The owner to freeze or cut off is preferably one inside its critical section after its read (its
 * write on waking is then the zombie write the guard must reject), else a holder, else any. The seed
 * fixes the nemesis' choices, not the owners' timing. A kind the members cannot deal
 * ({@link Members#deals}) is not dealt: it is left out of the deck, and the run says so.
 */
final class Nemesis {

    /** Every member frozen together past the owners' request timeout, under their TTL. */
    static final String FREEZE_ALL = "freeze-all-past-request-timeout";
    /** The faults that need nothing but processes, proxies and faketime. */
    static final List<String> PROCESS_KINDS = List.of(
            "freeze-owner",
            "partition-owner",
            "kill-member",
            "freeze-member",
            FREEZE_ALL,
            "compact",
            "step-clock-owner");
    /** The faults on the owners' proxies' links. */
    static final List<String> LINK_KINDS = List.of("slow-link", "lossy-link", "slow-during-leader-kill");
    /** The faults that need a {@link MemberNetwork} (the {@link #PEER_KINDS} also need {@link Members#peerLinks()}). */
    static final List<String> NET_KINDS = List.of(
            "isolate-leader",
            "split-cluster",
            "one-way-partition",
            "partition-during-freeze",
            "slow-peer-link",
            "lossy-peer-link");
    /** The faults on the members' peer links. */
    static final List<String> PEER_KINDS = List.of("slow-peer-link", "lossy-peer-link");
    /**
     * The faults of a Sentinel-managed Redis ({@link RedisFaults}): the primary killed or frozen until the sentinels
     * have promoted a replica, and replicas made to lag.
     */
    static final List<String> REDIS_KINDS = RedisFaults.KINDS;

    static final String[] KINDS = java.util.stream.Stream.of(PROCESS_KINDS, LINK_KINDS, NET_KINDS, REDIS_KINDS)
            .flatMap(List::stream)
            .toArray(String[]::new);

    /** The cluster's members (etcd or ZooKeeper). */
    final Members members;
    /** The kinds dealt, each once per round. */
    private final List<String> kinds;

    final List<Child> owners;
    final List<List<TcpProxy>> proxies;
    private final List<FakeClock> clocks;
    private final List<String> ownerLines;
    final Random random;
    private final long ttlNanos;
    /** The owners' request timeout: how long an owner waits for one answer of etcd or ZooKeeper. */
    private final long requestTimeoutNanos;

    final List<Observations.Fault> faults = new ArrayList<>();
    private int memberFaults;
    int leader = -1;

    /**
     * @param kinds the kinds to deal, each once per round; those the members cannot deal
     *     ({@link Members#deals}: the {@link #NET_KINDS} without a network, {@code compact} on ZooKeeper)
     *     are left out, and the run says so on stderr
     * @param ttlNanos the owners' lease TTL (etcd) or session timeout (ZooKeeper)
     * @param requestTimeoutNanos the owners' request timeout
     * @throws IllegalArgumentException if a kind is unknown, or none of them can be dealt, or {@value #FREEZE_ALL}
     *     is asked for and the request timeout is not shorter than the TTL (no freeze fits between them)
     */
    Nemesis(
            Members members,
            List<Child> owners,
            List<List<TcpProxy>> proxies,
            List<FakeClock> clocks,
            List<String> ownerLines,
            long seed,
            long ttlNanos,
            long requestTimeoutNanos,
            List<String> kinds) {
        for (String k : kinds) {
            if (!List.of(KINDS).contains(k)) {
                throw new IllegalArgumentException("no fault kind " + k + "; the kinds: " + String.join(", ", KINDS));
            }
        }
        List<String> left = kinds.stream().filter(k -> !members.deals(k)).toList();
        if (!left.isEmpty()) {
            System.err.println("[chaos] not dealt on " + members.backend() + " (it cannot): " + String.join(",", left));
        }
        if (kinds.contains(FREEZE_ALL) && !(0 < requestTimeoutNanos && requestTimeoutNanos < ttlNanos)) {
            throw new IllegalArgumentException(FREEZE_ALL + " needs the owners' request timeout ("
                    + requestTimeoutNanos / 1_000_000 + " ms) shorter than their TTL (" + ttlNanos / 1_000_000
                    + " ms): no freeze fits between them");
        }
        this.kinds = kinds.stream().filter(members::deals).toList();
        if (this.kinds.isEmpty() && !kinds.isEmpty()) {
            throw new IllegalArgumentException(
                    "none of the fault kinds " + kinds + " can be dealt on " + members.backend());
        }
        this.members = members;
        this.owners = owners;
        this.proxies = proxies;
        this.clocks = clocks;
        this.ownerLines = ownerLines;
        this.random = new Random(seed);
        this.ttlNanos = ttlNanos;
        this.requestTimeoutNanos = requestTimeoutNanos;
    }

    /**
     * Waits until the owners are up before the first fault: every owner has printed its wall clock and
     * one of them has been granted, or has passed a double barrier ({@link BarrierWorkload}: no grants there)
     * (bounded by the run's end). Four owner JVMs and the resource start
     * on the cores etcd runs on; a fault dealt during that start-up was blamed for the losses the
     * start-up itself caused (every owner's first 2 s lease ran out together, under a clock step).
     */
    private void awaitWarm(long endNanos) throws InterruptedException {
        while (System.nanoTime() < endNanos) {
            List<String> lines = List.copyOf(ownerLines);
            boolean granted =
                    lines.stream().anyMatch(l -> l.contains(" GRANT ") || l.contains(" " + BarrierRounds.PASS + " "));
            long clocked = IntStream.range(0, owners.size())
                    .filter(i -> lines.stream().anyMatch(l -> l.contains(" o" + i + " CLOCK ")))
                    .count();
            if (granted && clocked == owners.size()) {
                return;
            }
            Thread.sleep(100); // polling the owners' output for their start
        }
    }

    /**
     * Injects faults until {@code endNanos}: the kinds in a seeded random order, each once per round,
     * so that a short run sees every kind; with {@code onlyFreezes} every fault freezes an owner.
     */
    void run(long endNanos, boolean onlyFreezes) throws Exception {
        awaitWarm(endNanos);
        List<String> deck = new ArrayList<>();
        while (System.nanoTime() < endNanos) {
            Thread.sleep(1000 + random.nextInt(1000)); // healthy between faults
            if (deck.isEmpty()) {
                deck.addAll(kinds);
                Collections.shuffle(deck, random);
            }
            String kind = onlyFreezes ? "freeze-owner" : deck.remove(deck.size() - 1);
            long hold = (long) (ttlNanos * (1.5 + 1.5 * random.nextDouble()));
            long start = System.nanoTime();
            long[] step = {0};
            String target = switch (kind) {
                case "freeze-owner" ->
                    onHolder(
                            hold,
                            who -> owners.get(who).signal("STOP"),
                            who -> owners.get(who).signal("CONT"));
                case "partition-owner" ->
                    onHolder(
                            hold,
                            who -> proxies.get(who).forEach(p -> p.blackhole(true)),
                            who -> proxies.get(who).forEach(p -> p.blackhole(false)));
                case "kill-member" -> {
                    int m = member();
                    killAndRestart(m);
                    yield memberTarget(m);
                }
                case "freeze-member" -> {
                    int m = member();
                    members.pause(m);
                    Thread.sleep(300 + random.nextInt(700));
                    members.resume(m);
                    yield memberTarget(m);
                }
                case FREEZE_ALL -> {
                    long[] frozen = freezeAll(freezeAllNanos());
                    start = frozen[0];
                    step[0] = TimeUnit.NANOSECONDS.toMillis(frozen[2] - frozen[1]);
                    yield "all";
                }
                case "compact" -> {
                    try {
                        members.compact();
                        yield "-";
                    } catch (TimeoutException | ExecutionException e) {
                        // still recovering from the fault before (a member restarted under load): a fault, not the
                        // run's end
                        System.err.println("[chaos] compact not applied, etcd did not answer: " + e);
                        yield "not applied";
                    }
                }
                case "isolate-leader",
                        "split-cluster",
                        "one-way-partition",
                        "partition-during-freeze",
                        "slow-peer-link",
                        "lossy-peer-link" -> NetworkFaults.deal(this, kind, hold, step);
                case RedisFaults.KILL_PRIMARY, RedisFaults.FREEZE_PRIMARY, RedisFaults.LAG_REPLICA ->
                    RedisFaults.deal(this, kind, hold, step);
                case "slow-link", "lossy-link" -> {
                    int who = holder();
                    TcpProxy.Link link;
                    link = kind.equals("slow-link") ? slow(random, step) : lossy(random, step);
                    try {
                        proxies.get(who).forEach(p -> p.degrade(link));
                        TimeUnit.NANOSECONDS.sleep(hold);
                    } finally {
                        proxies.get(who).forEach(p -> p.degrade(TcpProxy.Link.CLEAN));
                    }
                    yield "o" + who;
                }
                case "slow-during-leader-kill" -> {
                    int m = member(true);
                    TcpProxy.Link link = slow(random, step);
                    long started = System.nanoTime();
                    try {
                        proxies.forEach(list -> list.forEach(p -> p.degrade(link)));
                        killAndRestart(m);
                        TimeUnit.NANOSECONDS.sleep(Math.max(0, hold - (System.nanoTime() - started)));
                    } finally {
                        proxies.forEach(list -> list.forEach(p -> p.degrade(TcpProxy.Link.CLEAN)));
                    }
                    yield memberTarget(m);
                }
                default -> {
                    int who = random.nextInt(owners.size());
                    step[0] = (60 + random.nextInt(541)) * (random.nextBoolean() ? 1 : -1);
                    clocks.get(who).step(step[0]);
                    TimeUnit.NANOSECONDS.sleep(hold);
                    clocks.get(who).step(0);
                    yield "o" + who;
                }
            };
            faults.add(new Observations.Fault(kind, target, start, System.nanoTime(), step[0]));
        }
    }

    /**
     * How long every member is frozen together in a {@value #FREEZE_ALL}: drawn from the seed between the
     * request timeout plus 15 % and plus 40 % of the gap to the TTL (1.15–1.4 s for a 1 s request timeout and a
     * 2 s TTL), so that every owner's request in flight times out while the members sleep, and the time it takes to
     * stop and resume them one after another (a {@code kill} each, and a wait until every thread of the member is
     * stopped: 0.1–0.3 s on 2 idle cores) still keeps every member's own freeze under the TTL.
     *
     * @throws IllegalStateException if the length drawn is not strictly between the request timeout and the TTL
     */
    long freezeAllNanos() {
        long gap = ttlNanos - requestTimeoutNanos;
        long length = requestTimeoutNanos + gap * 15 / 100 + (long) (random.nextDouble() * (gap * 25 / 100));
        if (!(requestTimeoutNanos < length && length < ttlNanos)) {
            throw new IllegalStateException(
                    FREEZE_ALL + ": " + length / 1_000_000 + " ms is not between the request timeout ("
                            + requestTimeoutNanos / 1_000_000 + " ms) and the TTL (" + ttlNanos / 1_000_000 + " ms)");
        }
        return length;
    }

    /**
     * Freezes every member, one after another, keeps them all frozen for {@code togetherNanos} from the moment
     * the last one stopped, and resumes them all (in a {@code finally}, each member even if another's resume
     * failed).
     *
     * @return when the first member's freeze was asked, when the last one had stopped, when the first resume was
     *     asked, and when the last resume had been sent ({@code System.nanoTime()})
     */
    long[] freezeAll(long togetherNanos) throws InterruptedException {
        long[] at = new long[4];
        int paused = 0;
        at[0] = System.nanoTime();
        try {
            for (; paused < members.size(); paused++) {
                members.pause(paused);
            }
            at[1] = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(togetherNanos);
        } finally {
            at[2] = System.nanoTime();
            RuntimeException failed = null;
            for (int m = 0; m < paused; m++) {
                try {
                    members.resume(m);
                } catch (RuntimeException e) {
                    failed = failed == null ? e : failed;
                }
            }
            at[3] = System.nanoTime();
            if (failed != null) {
                throw failed;
            }
        }
        if (at[3] - at[0] >= ttlNanos) {
            System.err.printf(
                    java.util.Locale.ROOT,
                    "[chaos] %s: the first member stayed frozen %d ms, not under the TTL"
                            + " (%d ms): stopping and resuming the members took %d ms%n",
                    FREEZE_ALL,
                    (at[3] - at[0]) / 1_000_000,
                    ttlNanos / 1_000_000,
                    (at[1] - at[0] + at[3] - at[2]) / 1_000_000);
        }
        return at;
    }

    /** A fault dealt to an owner, or undone. */
    private interface OwnerFault {
        void apply(int owner) throws Exception;
    }

    /**
     * Deals a fault to the owner that holds now ({@link #holder}) for {@code holdNanos}, then undoes it.
     *
     * @return the fault's target, {@code o<i>}
     */
    private String onHolder(long holdNanos, OwnerFault deal, OwnerFault undo) throws Exception {
        int who = holder();
        deal.apply(who);
        TimeUnit.NANOSECONDS.sleep(holdNanos);
        undo.apply(who);
        return "o" + who;
    }

    /** Kills member {@code m}, and starts it again as the same member 0.5–1.5 s later. */
    private void killAndRestart(int m) throws InterruptedException {
        members.kill(m);
        Thread.sleep(500 + random.nextInt(1000));
        members.startMember(m);
    }

    /** @return the target of a member's fault: {@code m<i>}, or {@code m<i>-leader} when it was the leader */
    private String memberTarget(int m) {
        return "m" + m + (m == leader ? "-leader" : "");
    }

    /** A slow link: 20–200 ms (its amount, put in {@code amount[0]}), jitter up to half that. */
    static TcpProxy.Link slow(Random random, long[] amount) {
        amount[0] = 20 + random.nextInt(181);
        return TcpProxy.Link.ofMillis(amount[0], random.nextInt((int) amount[0] / 2 + 1), 0);
    }

    /** A lossy link: 1–10 % of the chunks (its amount, put in {@code amount[0]}) stall 200–600 ms. */
    static TcpProxy.Link lossy(Random random, long[] amount) {
        amount[0] = 1 + random.nextInt(10);
        return TcpProxy.Link.ofMillis(0, 0, amount[0] / 100.0);
    }

    /**
     * The member to kill or freeze: the leader every other time (a leader's loss is the harder case:
     * an election, and leases the new leader must carry over), else one drawn from the seed.
     */
    int member() {
        leader = leader();
        memberFaults++;
        return memberFaults % 2 == 1 && leader >= 0 ? leader : random.nextInt(members.size());
    }

    /** The leader ({@code always}), else as {@link #member()}; one drawn from the seed when none answers. */
    int member(boolean always) {
        if (!always) {
            return member();
        }
        leader = leader();
        return leader >= 0 ? leader : random.nextInt(members.size());
    }

    /** @return the kinds this nemesis deals: those asked for that the members can deal */
    List<String> kinds() {
        return kinds;
    }

    /** Heals what the members can heal and waits for them to recover ({@link Members#awaitRecovered}). */
    java.util.Optional<String> awaitRecovered(long timeoutNanos) throws InterruptedException {
        return members.awaitRecovered(timeoutNanos);
    }

    private int leader() {
        return members.leader();
    }

    /**
     * The owner to freeze or cut off: one whose last event is a READ (inside its critical section), or a PASS
     * (inside a double barrier: its partners' leaves must wait for its key to run out), waited for up to 2 s; else
     * one whose last event is a GRANT; else any.
     */
    int holder() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        int granted = -1;
        do {
            String[] lastEvent = new String[owners.size()];
            int found = 0;
            for (int i = ownerLines.size() - 1; i >= 0 && found < lastEvent.length; i--) {
                String[] f = ownerLines.get(i).split(" ");
                String process = f.length >= 3 ? Observations.process(f[1]) : "";
                // a process's threads (the client workload's o1.t0 ...) count as the process: the freeze stops them all
                if (process.matches("o\\d+") && lastEvent[Integer.parseInt(process.substring(1))] == null) {
                    lastEvent[Integer.parseInt(process.substring(1))] = f[2];
                    found++;
                }
            }
            for (int i = 0; i < lastEvent.length; i++) {
                if ("READ".equals(lastEvent[i]) || BarrierRounds.PASS.equals(lastEvent[i])) {
                    return i;
                }
                if ("GRANT".equals(lastEvent[i])) {
                    granted = i;
                }
            }
            Thread.sleep(1); // polling the owners' events for one in its critical section
        } while (System.nanoTime() < deadline);
        return granted >= 0 ? granted : random.nextInt(owners.size());
    }
}
