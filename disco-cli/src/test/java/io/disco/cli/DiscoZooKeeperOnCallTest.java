package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.TcpProxy;
import io.disco.testservers.ThreadPerTask;
import io.disco.testservers.ZooKeeperExtension;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What on-call asks on ZooKeeper ({@code --backend zookeeper}) and {@code disco} answers, against a real ZooKeeper
 * (the in-process server of disco-test-servers): the names in use under a prefix, the nodes nobody uses and their
 * guarded delete, the hand-overs as they happen (also across an outage), and bad input or an unreachable server as a
 * usage error or exit code 4 within the timeout, never a hang.
 */
class DiscoZooKeeperOnCallTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static final Duration WAIT = Duration.ofSeconds(15);

    private static final CliHarness CLI = CliHarness.on(ZK);

    private final ZkClaims claims = new ZkClaims(ZK);

    @AfterEach
    void closeClaims() {
        claims.close();
    }

    private static CliHarness.Run disco(String... args) {
        return CLI.disco("", args);
    }

    /** The rows of leftovers' table, as "KIND KEY". */
    private static List<String> leftovers(CliHarness.Run r) {
        return r.out()
                .lines()
                .filter(l -> l.matches("^[a-z-]+ +/\\S+ .*"))
                .map(l -> String.join(" ", List.of(l.trim().split(" +")).subList(0, 2)))
                .toList();
    }

    @Test
    void listShowsEveryNameUnderAPrefixWithItsKindButNoneOfASemaphoresParts() throws Exception {
        String prefix = ZkClaims.name("list");
        ZooKeeperSession a = claims.session();
        ZooKeeperSession b = claims.session();
        Grant order = a.newLock(prefix + "/orders").lock(WAIT);
        CompletableFuture<Grant> waiting = b.newLock(prefix + "/orders").lockAsync();
        claims.awaitQueue(prefix + "/orders", 2, WAIT);
        a.newRWLock(prefix + "/catalog").rLock(WAIT);
        b.newRWLock(prefix + "/catalog").rLock(WAIT);
        a.newSemaphore(prefix + "/pool", 3).acquire(WAIT);
        // a lease of Curator's recipe on the same semaphore is one of its holders (its internal mutex <name>/locks is
        // a part of it, never a name)
        InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(claims.client(), prefix + "/pool", 3);
        assertNotNull(curator.acquire(WAIT.toSeconds(), SECONDS));
        b.newElection(prefix + "/leader").campaign("b-proposal", WAIT);
        claims.session().newLock(prefix + "/orders/archive").lock(WAIT); // a nested name: a line of its own
        RWLockService idle = a.newRWLock(prefix + "/idle"); // a phase marker whose lock nobody holds: 0 0
        idle.rLock(WAIT);
        idle.rUnlock();

        CliHarness.Run r = disco("list", prefix);
        assertEquals(0, r.code(), r.err());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(0).matches("NAME +KIND +HOLDING +WAITING +TOKEN +HELD-SINCE"), lines.get(0));
        List<String> rows = lines.stream()
                .filter(l -> l.startsWith(prefix))
                .map(l -> String.join(" ", List.of(l.trim().split(" +")).subList(0, 4)))
                .toList();
        assertEquals(
                List.of(
                        prefix + "/catalog rwlock 2 0",
                        prefix + "/idle rwlock 0 0",
                        prefix + "/leader election 1 0",
                        prefix + "/orders lock 1 1",
                        prefix + "/orders/archive lock 1 0",
                        prefix + "/pool semaphore 2 0"),
                rows,
                r.out());
        String orders = lines.stream()
                .filter(l -> l.startsWith(prefix + "/orders "))
                .findFirst()
                .orElseThrow();
        assertTrue(orders.matches(".* " + order.token().value() + " +\\?$"), "token, and held-since '?': " + orders);
        assertTrue(lines.get(lines.size() - 1).startsWith("6 names at or under " + prefix), r.out());

        CliHarness.Run none = disco("list", prefix + "/nothing");
        assertEquals(ExitCode.NOTHING_HELD, none.code());
        assertTrue(none.err().contains("no name in use at or under " + prefix + "/nothing"), none.err());
        waiting.cancel(true);
    }

    @Test
    void leftoversFindsWhatNoHolderUsesAndDeletesOnlyThat() throws Exception {
        String prefix = ZkClaims.name("leftovers");
        String rw = prefix + "/rw";
        String pool = prefix + "/pool";
        String busy = prefix + "/busy";
        String reading = prefix + "/reading";

        ZooKeeperSession a = claims.session();
        RWLockService r = a.newRWLock(rw);
        long phase = r.rLock(WAIT).token().value();
        r.rUnlock(); // the phase marker stays: only a writer's admission deletes it
        RWLockService deep = a.newRWLock(prefix + "/deep/rw"); // its marker's directory holds nothing else
        deep.rLock(WAIT);
        deep.rUnlock();
        SemaphoreService s = a.newSemaphore(pool, 2);
        s.acquire(WAIT);
        s.release(); // the limit and the slot stay: a release empties the slot
        SemaphoreService inUse = a.newSemaphore(busy, 1);
        Permit held = inUse.acquire(WAIT);
        RWLockService reader = a.newRWLock(reading);
        reader.rLock(WAIT);
        String broken = prefix + "/broken";
        Grant g = claims.session().newLock(broken).lock(WAIT);
        assertEquals(0, disco("break", broken, "--yes").code());
        String record = ZooKeeperNodes.breakRecord(g.key());
        assertNotNull(claims.stat(record));

        CliHarness.Run found = disco("leftovers", prefix + "/");
        assertEquals(0, found.code(), found.err());
        List<String> rows = leftovers(found);
        for (String expected : List.of(
                "rwlock-phase " + ZooKeeperNodes.phaseMarker(rw),
                "semaphore-limit " + ZooKeeperNodes.semaphoreLimit(pool),
                "semaphore-slot " + ZooKeeperNodes.semaphoreSlot(pool, 0),
                "semaphore-dir " + ZooKeeperNodes.semaphoreSlots(pool),
                "rwlock-phase " + ZooKeeperNodes.phaseMarker(prefix + "/deep/rw"),
                "empty-dir " + ZooKeeperNodes.phaseMarker(prefix + "/deep"))) {
            assertTrue(rows.contains(expected), expected + " in:\n" + found.out());
        }
        assertTrue(found.out().contains("(limit 2)"), found.out());
        for (String used :
                List.of(busy, ZooKeeperNodes.phaseMarker(reading), record, ZooKeeperNodes.breakRecord(prefix))) {
            assertTrue(
                    rows.stream().noneMatch(row -> row.endsWith(" " + used) || row.contains(" " + used + "/")),
                    "what is in use, or a break record younger than 5 minutes, is no leftover: " + used + "\n"
                            + found.out());
        }
        Matcher count =
                Pattern.compile("(\\d+) leftovers; --delete deletes them").matcher(found.out());
        assertTrue(count.find(), found.out());

        CliHarness.Run deleted = disco("leftovers", prefix + "/", "--delete");
        assertEquals(0, deleted.code(), deleted.err());
        assertFalse(deleted.out().contains("kept "), "nothing is kept while the names are quiet: " + deleted.out());
        Matcher done = Pattern.compile("deleted (\\d+) of (\\d+) leftovers(?: \\((\\d+) gone meanwhile\\))?")
                .matcher(deleted.out());
        assertTrue(done.find(), deleted.out());
        assertEquals(
                Integer.parseInt(done.group(2)),
                Integer.parseInt(done.group(1)) + (done.group(3) == null ? 0 : Integer.parseInt(done.group(3))),
                "every leftover deleted, or gone meanwhile (ZooKeeper's container sweep): " + deleted.out());
        assertNull(claims.stat(ZooKeeperNodes.phaseMarker(rw)));
        assertNull(claims.stat(ZooKeeperNodes.semaphoreLimit(pool)));
        assertNull(claims.stat(ZooKeeperNodes.semaphoreSlots(pool)));
        assertNull(claims.stat(ZooKeeperNodes.phaseMarker(prefix + "/deep")));
        // what is in use stays, and its holders hold
        assertNotNull(claims.stat(ZooKeeperNodes.semaphoreLimit(busy)));
        assertNotNull(claims.stat(held.key()));
        assertTrue(inUse.err().isEmpty() && reader.err().isEmpty());
        assertNotNull(claims.stat(ZooKeeperNodes.phaseMarker(reading)));
        assertNotNull(claims.stat(record));
        CliHarness.Run again = disco("leftovers", prefix + "/");
        assertTrue(again.out().contains("no leftovers under " + prefix + "/"), again.out());

        // deleting them was safe: the next semaphore service records its limit again, the next reader a new marker
        Permit next = claims.session().newSemaphore(pool, 1).acquire(WAIT);
        assertEquals(0, next.slot());
        assertNotNull(claims.stat(ZooKeeperNodes.semaphoreLimit(pool)));
        assertTrue(r.rLock(WAIT).token().value() > phase, "a new phase marker, a new token");
        r.rUnlock();
        inUse.release();
        reader.rUnlock();
    }

    @Test
    void watchPrintsEveryHandOverOfThisLibrarysAndCuratorsClaimsAndTellsABreak() throws Exception {
        String name = ZkClaims.name("watch");
        try (CliHarness.Watching watch = CLI.new Watching("watch", name)) {
            await().atMost(WAIT).until(() -> watch.printed("watching " + name + ": nobody holds or waits for it now"));
            LockService la = claims.session().newLock(name);
            Grant first = la.lock(WAIT);
            await().atMost(WAIT).until(() -> watch.printed(name + " is claimed as a lock"));
            await().atMost(WAIT)
                    .until(() -> watch.printed(
                            "acquired", first.key(), "token=" + first.token().value()));
            LockService lb = claims.session().newLock(name);
            CompletableFuture<Grant> second = lb.lockAsync();
            String secondNode = claims.awaitQueue(name, 2, WAIT).get(1);
            await().atMost(WAIT).until(() -> watch.printed("queued", secondNode, "token=-"));

            la.unlock();
            Grant g = second.get(WAIT.toSeconds(), SECONDS);
            await().atMost(WAIT).until(() -> watch.printed("released", first.key()));
            await().atMost(WAIT)
                    .until(() -> watch.printed(
                            "acquired", g.key(), "token=" + g.token().value()));

            CuratorFramework cc = claims.client();
            InterProcessMutex curator = new InterProcessMutex(cc, name);
            CompletableFuture<Boolean> curatorHolds = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            curator.acquire();
                            return true;
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    ThreadPerTask.DAEMON);
            String curatorNode = claims.awaitQueue(name, 2, WAIT).get(1);
            await().atMost(WAIT).until(() -> watch.printed("queued", curatorNode));

            assertEquals(0, disco("break", name, "--yes").code());
            assertTrue(curatorHolds.get(WAIT.toSeconds(), SECONDS));
            await().atMost(WAIT).until(() -> watch.printed("broken", g.key()));
            await().atMost(WAIT).until(() -> watch.printed("acquired", curatorNode));
            assertFalse(watch.printed("released", g.key()), "a break is told from a release: " + watch.text());

            cc.close(); // its session ends, and its node with it: ZooKeeper does not say why, so it reads as a release
            await().atMost(WAIT).until(() -> watch.printed("released", curatorNode));
            assertTrue(watch.text().lines().noneMatch(l -> l.startsWith("disco: ")), watch.text());
        }
    }

    /**
     * Through a proxy that stops forwarding: the watch says once that ZooKeeper does not answer, keeps going, says
     * when it answers again and shows what changed meanwhile.
     */
    @Test
    void watchOutlivesAnUnreachableZooKeeper() throws Exception {
        String server = ZK.connectString();
        InetSocketAddress target = new InetSocketAddress(
                InetAddress.getByName(server.substring(0, server.lastIndexOf(':'))),
                Integer.parseInt(server.substring(server.lastIndexOf(':') + 1)));
        String name = ZkClaims.name("watch-outage");
        try (TcpProxy proxy = new TcpProxy(target);
                CliHarness.Watching watch = CLI
                .new Watching(
                        "watch",
                        name,
                        "--primitive",
                        "lock",
                        "--backend",
                        "zookeeper",
                        "--connect",
                        "127.0.0.1:" + proxy.port(),
                        "--command-timeout",
                        "1s")) {
            await().atMost(WAIT).until(() -> watch.printed("watching lock " + name));
            LockService la = claims.session().newLock(name);
            Grant g = la.lock(WAIT);
            await().atMost(WAIT).until(() -> watch.printed("acquired", g.key()));

            proxy.blackhole(true);
            await().atMost(WAIT).until(() -> watch.printed("no answer from ZooKeeper", "still watching"));
            la.unlock(); // while the watch cannot see it
            proxy.blackhole(false);
            await().atMost(WAIT).until(() -> watch.printed("ZooKeeper answers again"));
            await().atMost(WAIT).until(() -> watch.printed("released", g.key()));
            Grant again = la.lock(WAIT);
            await().atMost(WAIT).until(() -> watch.printed("acquired", again.key()));
            assertEquals(
                    1,
                    watch.text()
                            .lines()
                            .filter(l -> l.contains("still watching"))
                            .count(),
                    "said once per outage: " + watch.text());
            la.unlock();
        }
    }

    /** Bad flags, names and connect strings are usage errors of one line; nothing is read. */
    @Test
    void badBackendsFlagsNamesAndConnectStringsAreUsageErrorsOfOneLine() {
        String zk = "--connect=" + ZK.connectString();
        String[][] cases = {
            {"holders", "/x", "--backend", "consul"},
            {"holders", "/x", "--backend", "zookeeper", zk, "--endpoints=127.0.0.1:2379"},
            {"break", "/x", "--backend", "zookeeper", zk, "--user=root:pw", "--yes"},
            {"leftovers", "--backend", "zookeeper", zk, "--cacert=/etc/hostname"},
            {"holders", "/x", "--connect=127.0.0.1:2181"},
            {"holders", "/x", "--backend=etcd", "--connect=127.0.0.1:2181"},
            {"holders", "/x", "--backend", "zookeeper", "--connect="},
            {"holders", "/x", "--backend", "zookeeper", "--connect=,"},
            {"holders", "/x", "--backend", "zookeeper", "--connect=127.0.0.1:notaport"},
            {"holders", "/x", "--backend", "zookeeper", "--connect=127.0.0.1:70000"},
            {"holders", "/x", "--backend", "zookeeper", "--connect=:2181"},
            {"holders", "/x", "--backend", "zookeeper", "--connect=::1:2181"},
            {"holders", "/x", "--backend", "zookeeper", "--connect=127.0.0.1:2181/app//x"},
            {"holders", "jobs", "--backend", "zookeeper", zk},
            {"holders", "/x/", "--backend", "zookeeper", zk},
            {"watch", "/x/../y", "--backend", "zookeeper", zk},
            {"list", "/x/", "--backend", "zookeeper", zk},
            {"leftovers", "locks", "--backend", "zookeeper", zk},
        };
        for (String[] args : cases) {
            CliHarness.Run r = disco(args);
            assertEquals(ExitCode.USAGE, r.code(), String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().startsWith("disco: ") && r.err().lines().count() == 1, "one line: " + r.err());
            assertFalse(r.err().contains("Exception"), "no exception's name: " + r.err());
        }
        assertTrue(disco(cases[0]).err().contains("give etcd (the default), zookeeper or redis"));
        assertTrue(disco(cases[1]).err().contains("--endpoints is a flag of etcd"));
        assertTrue(disco(cases[4]).err().contains("add --backend zookeeper"));
        // an environment default of etcd's (ETCDCTL_ENDPOINTS) is no flag given: only the command line counts
        CliHarness.Run unknown = disco("holders", ZkClaims.name("nobody"));
        assertEquals(ExitCode.NOTHING_HELD, unknown.code(), unknown.err());
    }

    @Test
    void anUnreachableRefusingOrSilentServerEndsWithExit4WithinTheTimeoutSayingWhy() throws Exception {
        int refusing;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            refusing = free.getLocalPort(); // closed below: nothing listens on it
        }
        List<String[]> commands = List.of(
                new String[] {"holders", "/locks/x"},
                new String[] {"list", "/locks"},
                new String[] {"break", "/locks/x", "--yes"},
                new String[] {"leftovers"},
                new String[] {"watch", "/locks/x"});
        for (String[] command : commands) {
            List<String> args = new ArrayList<>(List.of(command));
            args.addAll(
                    List.of("--backend", "zookeeper", "--connect", "127.0.0.1:" + refusing, "--command-timeout=1s"));
            long start = System.nanoTime();
            CliHarness.Run r = disco(args.toArray(String[]::new));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(ExitCode.UNREACHABLE, r.code(), r.err());
            assertTrue(
                    r.err().contains("no answer from ZooKeeper at 127.0.0.1:" + refusing + " within 1 s")
                            && r.err().contains("connection refused"),
                    r.err());
            assertEquals(1, r.err().lines().count(), "one line: " + r.err());
            assertTrue(ms < 8000, "a timeout, not a hang: " + ms + " ms");
        }

        CliHarness.Run dns = disco(
                "holders",
                "/locks/x",
                "--backend",
                "zookeeper",
                "--connect",
                "no-such-host.invalid:2181",
                "--command-timeout=1s");
        assertEquals(ExitCode.UNREACHABLE, dns.code(), dns.err());
        assertTrue(dns.err().contains("unknown host"), dns.err());

        // a server that accepts connections and never answers (frozen, or not ZooKeeper)
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new ArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept());
                    }
                } catch (IOException e) {
                    // closed
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            long start = System.nanoTime();
            CliHarness.Run r = disco(
                    "holders",
                    "/locks/x",
                    "--backend",
                    "zookeeper",
                    "--connect",
                    "127.0.0.1:" + silent.getLocalPort(),
                    "--command-timeout=1s");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(ExitCode.UNREACHABLE, r.code(), r.err());
            assertTrue(r.err().contains("accepts connections but did not complete ZooKeeper's handshake"), r.err());
            assertTrue(ms < 8000, "a timeout, not a hang: " + ms + " ms");
        }
    }
}
