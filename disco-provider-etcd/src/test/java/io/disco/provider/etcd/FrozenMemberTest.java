package io.disco.provider.etcd;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.fencing.FencingToken;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One etcd member frozen (SIGSTOP: its connections stay open, nothing is answered) or killed must
 * not stall the queue: owners, each with its own client balanced over all three members, hand the
 * lock (or the leadership) round while the leader, then a follower, is frozen, and while the leader
 * is killed. The longest gap between consecutive grants around each fault is printed and must stay
 * under one second; no release may wait out the request timeout; no lease is lost (the TTL outlasts
 * no fault here, so any loss would be a false one); tokens increase in grant order.
 */
class FrozenMemberTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.cluster(3);

    private static final int OWNERS = 3;
    private static final Duration FAULT = Duration.ofSeconds(3);
    /**
     * Hand-overs go on while the member is still faulty: every gap is shorter than the fault itself.
     * Without failover a frozen member stalls its clients' requests until it resumes (a gap of the
     * whole fault); a bound tighter than etcd's own election timeout (1 s) would measure the
     * machine's load, not the library (a leader kill took 1,054 ms on 2 loaded cores).
     */
    private static final long MAX_GAP_MS = FAULT.toMillis();
    /**
     * TTL 10 s. Not shorter: etcd 3.4's frozen leader, when it resumes, still counts every lease from
     * the last renewal it saw and revokes those it finds expired, through the new leader. With a TTL
     * under the freeze plus one renewal interval that is a real loss of every session (seen with
     * TTL 4 s and a 3 s freeze), which the library reports; this test is about hand-overs.
     */
    private static final EtcdOptions OPTIONS = Etcd.options(10, 5);

    /** One owner's round: acquire, hold briefly, release; returns the token it was granted. */
    interface Round {
        FencingToken run() throws Exception;
    }

    record GrantAt(long nanos, long token) {}

    @Test
    void lockHandOversGoOnWhileAMemberIsFrozenOrKilled() throws Exception {
        run("lock", (client, prefix) -> {
            LockService lock = EtcdProvider.newLock(client, prefix, OPTIONS);
            return new Owner(lock::close, () -> {
                FencingToken t = lock.lock().token();
                return new Held(t, lock::unlock, () -> lock.err().isPresent());
            });
        });
    }

    @Test
    void electionHandOversGoOnWhileAMemberIsFrozenOrKilled() throws Exception {
        run("election", (client, prefix) -> {
            ElectionService election = EtcdProvider.newElection(client, prefix, OPTIONS);
            return new Owner(election::close, () -> {
                FencingToken t = election.campaign("candidate").token();
                return new Held(t, election::resign, () -> election.err().isPresent());
            });
        });
    }

    interface Acquire {
        Held acquire() throws Exception;
    }

    interface Release {
        void release() throws Exception;
    }

    interface Lost {
        boolean lost();
    }

    record Held(FencingToken token, Release release, Lost lost) {}

    record Owner(AutoCloseable service, Acquire acquire) {}

    interface OwnerFactory {
        Owner open(Client client, String prefix) throws Exception;
    }

    private void run(String kind, OwnerFactory factory) throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = Etcd.uniquePrefix("frozen-member-" + kind);
        List<GrantAt> grants = new CopyOnWriteArrayList<>();
        List<String> problems = new CopyOnWriteArrayList<>();
        List<Long> releaseMs = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Client> clients = new ArrayList<>();
        List<Owner> owners = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < OWNERS; i++) {
                Client c = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .build();
                clients.add(c);
                Owner o = factory.open(c, prefix);
                owners.add(o);
                Thread t = new Thread(() -> loop(o, stop, grants, releaseMs, problems), kind + "-owner-" + i);
                threads.add(t);
                t.start();
            }
            List<String> report = new ArrayList<>();
            long maxGap = 0;
            Thread.sleep(1000); // the workload runs: grants every few ms
            for (String fault : List.of("freeze leader", "freeze follower", "kill leader")) {
                int member = Etcd.aMember(etcd, !fault.endsWith("follower"));
                long from = System.nanoTime();
                if (fault.startsWith("freeze")) {
                    etcd.pause(member);
                } else {
                    etcd.kill(member);
                }
                Thread.sleep(FAULT.toMillis()); // the fault lasts this long: the workload is what is measured
                if (fault.startsWith("freeze")) {
                    etcd.resume(member);
                } else {
                    etcd.startMember(member);
                }
                Thread.sleep(1000);
                long to = System.nanoTime();
                long gap = longestGapMs(grants, from, to);
                long count = grants.stream()
                        .filter(g -> g.nanos() >= from && g.nanos() <= to)
                        .count();
                report.add(String.format("%s (member %d): %d grants, longest gap %d ms", fault, member, count, gap));
                maxGap = Math.max(maxGap, gap);
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(15));
                assertTrue(!t.isAlive(), t.getName() + " is stuck");
            }
            long slowestRelease =
                    releaseMs.stream().mapToLong(Long::longValue).max().orElse(0);
            System.out.printf("%s with one member faulty: %s; slowest release %d ms%n", kind, report, slowestRelease);
            assertEquals(List.of(), problems, "no loss and no error while one member is faulty");
            assertTrue(maxGap < MAX_GAP_MS, kind + ": hand-overs stalled: " + report);
            assertTrue(slowestRelease < MAX_GAP_MS, kind + ": a release waited " + slowestRelease + " ms");
            long previous = 0;
            for (GrantAt g : grants) {
                assertTrue(g.token() > previous, "tokens increase in grant order: " + previous + " then " + g.token());
                previous = g.token();
            }
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(15));
            }
            for (Owner o : owners) {
                o.service().close();
            }
            clients.forEach(Client::close);
        }
    }

    private static void loop(
            Owner o, AtomicBoolean stop, List<GrantAt> grants, List<Long> releaseMs, List<String> problems) {
        while (!stop.get()) {
            try {
                Held h = o.acquire().acquire();
                synchronized (grants) { // grant order is the order of the (exclusive) holds
                    grants.add(new GrantAt(System.nanoTime(), h.token().value()));
                }
                long t0 = System.nanoTime();
                h.release().release();
                releaseMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                if (h.lost().lost()) {
                    problems.add("lost after token " + h.token());
                    return;
                }
            } catch (Exception e) {
                problems.add(Thread.currentThread().getName() + ": " + e);
                return;
            }
        }
    }

    private static long longestGapMs(List<GrantAt> grants, long from, long to) {
        long last = from;
        long gap = 0;
        for (GrantAt g : grants) {
            if (g.nanos() < from) {
                continue;
            }
            long at = Math.min(g.nanos(), to);
            gap = Math.max(gap, at - last);
            last = at;
            if (g.nanos() > to) {
                break;
            }
        }
        gap = Math.max(gap, to - last);
        return TimeUnit.NANOSECONDS.toMillis(gap);
    }

    /**
     * Quiet own-key watches spread over the three members; once the member's watches have been
     * probed and answered (two progress reports), a follower freezes and every held key is deleted
     * through the other two. Each service must still report its loss: the watches on the frozen
     * member are found silent by the probes that go on after each answer, and moved.
     */
    @Test
    void quietWatchesLeaveAMemberThatFreezesLater() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String prefix = Etcd.uniquePrefix("frozen-quiet");
        RpcCounter counter = new RpcCounter();
        int member = Etcd.aMember(etcd, false);
        List<String> others = new ArrayList<>();
        for (int i = 0; i < etcd.size(); i++) {
            if (i != member) {
                others.add(etcd.endpoint(i));
            }
        }
        try (Client client = Client.builder()
                        .endpoints(etcd.endpoints().toArray(String[]::new))
                        .interceptor(counter)
                        .build();
                Client outside = Client.builder()
                        .endpoints(others.toArray(String[]::new))
                        .build();
                EtcdSession session = EtcdSession.open(client, OPTIONS)) {
            List<LockService> locks = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                LockService l = session.newLock(prefix + "/" + i);
                locks.add(l);
                keys.add(l.lock().key());
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> counter.progress() >= 2);
            long readsBefore = counter.calls("KV/Range");
            etcd.pause(member);
            try {
                long deletedAt = System.nanoTime();
                for (String k : keys) {
                    outside.getKVClient().delete(Etcd.bytes(k)).get(5, TimeUnit.SECONDS);
                }
                for (int i = 0; i < locks.size(); i++) {
                    try {
                        locks.get(i).done().toCompletableFuture().get(10, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError(
                                "lock " + i + " did not report its deleted key within 10 s: its watch"
                                        + " stayed on the frozen member",
                                e);
                    }
                }
                long reads = counter.calls("KV/Range") - readsBefore;
                System.out.printf(
                        "30 held keys deleted while a follower was frozen: every done() within %d ms;"
                                + " %d own keys read by watches that were moved%n",
                        (System.nanoTime() - deletedAt) / 1_000_000, reads);
                assertTrue(reads > 0, "no own-key watch was on the frozen member (none was moved and read its key)");
                assertTrue(session.err().isEmpty(), "the session itself is not lost");
            } finally {
                etcd.resume(member);
            }
        }
    }
}
