package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * Injects one fault at a time, healing in between, chosen with the run's seed:
 * <ul>
 *   <li>{@code freeze-owner}: SIGSTOP an owner for 1.5–3 × TTL;</li>
 *   <li>{@code partition-owner}: blackhole an owner's proxies (connections held open, nothing
 *       forwarded) for 1.5–3 × TTL;</li>
 *   <li>{@code kill-member}: kill -9 an etcd member and start it again 0.5–1.5 s later;</li>
 *   <li>{@code freeze-member}: SIGSTOP a member for 0.3–1 s (under a renewal's margin);</li>
 *   <li>the member is the leader every other time (its target then reads {@code m<i>-leader});</li>
 *   <li>{@code compact}: compact etcd to the current revision;</li>
 *   <li>{@code step-clock-owner}: step an owner's wall clock by 1–10 minutes, forward or back, for
 *       1.5–3 × TTL, then back (its monotonic clock untouched).</li>
 * </ul>
 * The owner to freeze or cut off is preferably one inside its critical section after its read (its
 * write on waking is then the zombie write the guard must reject), else a holder, else any. The seed
 * fixes the nemesis' choices, not the owners' timing.
 */
final class Nemesis {

    static final String[] KINDS = {"freeze-owner", "partition-owner", "kill-member", "freeze-member", "compact",
        "step-clock-owner"};

    private final EtcdCluster etcd;
    private final List<Child> owners;
    private final List<List<TcpProxy>> proxies;
    private final List<FakeClock> clocks;
    private final List<String> ownerLines;
    private final Random random;
    private final long ttlNanos;
    final List<Observations.Fault> faults = new ArrayList<>();
    private int memberFaults;
    private int leader = -1;

    Nemesis(EtcdCluster etcd, List<Child> owners, List<List<TcpProxy>> proxies, List<FakeClock> clocks,
            List<String> ownerLines, long seed, long ttlNanos) {
        this.etcd = etcd;
        this.owners = owners;
        this.proxies = proxies;
        this.clocks = clocks;
        this.ownerLines = ownerLines;
        this.random = new Random(seed);
        this.ttlNanos = ttlNanos;
    }

    /**
     * Waits until the owners are up before the first fault: every owner has printed its wall clock and
     * one of them has been granted (bounded by the run's end). Four owner JVMs and the resource start
     * on the cores etcd runs on; a fault dealt during that start-up was blamed for the losses the
     * start-up itself caused (every owner's first 2 s lease ran out together, under a clock step).
     */
    private void awaitWarm(long endNanos) throws InterruptedException {
        while (System.nanoTime() < endNanos) {
            List<String> lines = List.copyOf(ownerLines);
            boolean granted = lines.stream().anyMatch(l -> l.contains(" GRANT "));
            long clocked = IntStream.range(0, owners.size())
                    .filter(i -> lines.stream().anyMatch(l -> l.contains(" o" + i + " CLOCK "))).count();
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
                deck.addAll(List.of(KINDS));
                Collections.shuffle(deck, random);
            }
            String kind = onlyFreezes ? KINDS[0] : deck.remove(deck.size() - 1);
            long hold = (long) (ttlNanos * (1.5 + 1.5 * random.nextDouble()));
            long start = System.nanoTime();
            long[] step = {0};
            String target = switch (kind) {
                case "freeze-owner" -> {
                    int who = holder();
                    owners.get(who).signal("STOP");
                    TimeUnit.NANOSECONDS.sleep(hold);
                    owners.get(who).signal("CONT");
                    yield "o" + who;
                }
                case "partition-owner" -> {
                    int who = holder();
                    proxies.get(who).forEach(p -> p.blackhole(true));
                    TimeUnit.NANOSECONDS.sleep(hold);
                    proxies.get(who).forEach(p -> p.blackhole(false));
                    yield "o" + who;
                }
                case "kill-member" -> {
                    int m = member();
                    etcd.kill(m);
                    Thread.sleep(500 + random.nextInt(1000));
                    etcd.startMember(m);
                    yield "m" + m + (m == leader ? "-leader" : "");
                }
                case "freeze-member" -> {
                    int m = member();
                    etcd.pause(m);
                    Thread.sleep(300 + random.nextInt(700));
                    etcd.resume(m);
                    yield "m" + m + (m == leader ? "-leader" : "");
                }
                case "compact" -> {
                    compact();
                    yield "-";
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
     * The member to kill or freeze: the leader every other time (a leader's loss is the harder case:
     * an election, and leases the new leader must carry over), else one drawn from the seed.
     */
    private int member() {
        leader = leader();
        memberFaults++;
        return memberFaults % 2 == 1 && leader >= 0 ? leader : random.nextInt(etcd.size());
    }

    /** @return the index of the member that leads now, or -1 when none answers */
    private int leader() {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            for (int i = 0; i < etcd.size(); i++) {
                StatusResponse s = c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(5, TimeUnit.SECONDS);
                if (s.getLeader() == s.getHeader().getMemberId()) {
                    return i;
                }
            }
        } catch (Exception e) {
            // no member answered in time: pick one at random
        }
        return -1;
    }

    private void compact() throws Exception {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            long rev = c.getKVClient().get(ByteSequence.from("x", UTF_8)).get(10, TimeUnit.SECONDS).getHeader().getRevision();
            try {
                c.getKVClient().compact(rev).get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!String.valueOf(e.getCause().getMessage()).contains("compacted")) {
                    throw e;
                } // nothing written since the last compaction: already compacted
            }
        }
    }

    /**
     * The owner to freeze or cut off: one whose last event is a READ (inside its critical section),
     * waited for up to 2 s; else one whose last event is a GRANT; else any.
     */
    private int holder() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        int granted = -1;
        do {
            String[] lastEvent = new String[owners.size()];
            int found = 0;
            for (int i = ownerLines.size() - 1; i >= 0 && found < lastEvent.length; i--) {
                String[] f = ownerLines.get(i).split(" ");
                if (f.length >= 3 && f[1].startsWith("o") && lastEvent[Integer.parseInt(f[1].substring(1))] == null) {
                    lastEvent[Integer.parseInt(f[1].substring(1))] = f[2];
                    found++;
                }
            }
            for (int i = 0; i < lastEvent.length; i++) {
                if ("READ".equals(lastEvent[i])) {
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
