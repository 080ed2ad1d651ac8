package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdSession;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RedisExtension;
import io.disco.testservers.ZooKeeperExtension;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shipped tool, not the reactor's classpath: {@code java -jar target/disco-cli-<version>-all.jar}, each command
 * in its own process, on every primitive, against a throwaway etcd, and on a lock on a throwaway ZooKeeper. Runs in the {@code integration-test} phase,
 * after the shade step wrote the jar (the {@code jar-it} execution of disco-cli's POM passes its path as
 * {@code disco.cli.jar}); a jar that lacks a class a command needs (as it once lacked disco-rwlock, declared with
 * test scope) fails here with the process's {@code NoClassDefFoundError}.
 */
class DiscoCliJarIT {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    @RegisterExtension
    static final RedisExtension REDIS = RedisExtension.sharedServer();

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static final CliHarness CLI = new CliHarness(ETCD);

    private static Path jar;

    @BeforeAll
    static void findTheJar() {
        String path = System.getProperty("disco.cli.jar");
        assertNotNull(
                path,
                "the built jar's path (disco.cli.jar) is set by the jar-it execution of the integration-test"
                        + " phase: run mvn -pl disco-cli verify, not -Dtest=DiscoCliJarIT in the test phase");
        jar = Path.of(path);
        assertTrue(Files.isRegularFile(jar), "the shaded jar " + jar + " exists (mvn -pl disco-cli package)");
    }

    /** One finished process: exit code and its output. */
    record Run(int code, String out, String err) {
        boolean ok() {
            return code == 0 && !err.contains("NoClassDefFoundError") && !err.contains("ClassNotFoundException");
        }
    }

    /** {@code java -jar} the tool with {@code args}; on the test etcd unless they name a cluster themselves. */
    private static ProcessBuilder command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-jar",
                jar.toString()));
        cmd.addAll(List.of(args));
        if (cmd.stream()
                .noneMatch(
                        a -> a.startsWith("--backend") || a.startsWith("--endpoints") || a.startsWith("--redis-uri"))) {
            cmd.add("--endpoints=" + String.join(",", ETCD.cluster().endpoints()));
        }
        return new ProcessBuilder(cmd);
    }

    /** {@code args} on the test ZooKeeper: {@code --backend zookeeper --connect ...}. */
    private static String[] onZooKeeper(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--backend", "zookeeper", "--connect", ZK.connectString()));
        return all.toArray(String[]::new);
    }

    /** {@code args} on the test Redis: {@code --backend redis --redis-uri ...}. */
    private static String[] onRedis(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--backend", "redis", "--redis-uri", REDIS.uri()));
        return all.toArray(String[]::new);
    }

    private static Run disco(String... args) throws Exception {
        Process p = command(args).start();
        p.getOutputStream().close();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        if (!p.waitFor(WAIT.toSeconds(), SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("java -jar ... " + String.join(" ", args) + " did not end within " + WAIT);
        }
        Run r = new Run(p.exitValue(), out.get(5, SECONDS), err.get(5, SECONDS));
        System.out.println("$ java -jar " + jar.getFileName() + " " + String.join(" ", args) + "  -> " + r.code() + "\n"
                + r.out() + r.err());
        return r;
    }

    private static CompletableFuture<String> drain(InputStream in) {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        return CompletableFuture.supplyAsync(() -> {
            try {
                in.transferTo(buffer);
            } catch (IOException e) {
                // the process was destroyed: what was read is the output
            }
            return buffer.toString(StandardCharsets.UTF_8);
        });
    }

    /** {@code watch NAME} in its own process, until {@link #stop}: what it printed so far. */
    private static final class Watch implements AutoCloseable {
        private final Process process;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final ByteArrayOutputStream err = new ByteArrayOutputStream();

        Watch(String name) throws IOException {
            this(new String[] {"watch", name});
        }

        Watch(String... args) throws IOException {
            process = command(args).start();
            process.getOutputStream().close();
            copy(process.getInputStream(), out);
            copy(process.getErrorStream(), err);
        }

        private static void copy(InputStream in, ByteArrayOutputStream to) {
            Thread t = new Thread(
                    () -> {
                        byte[] b = new byte[4096];
                        try {
                            for (int n; (n = in.read(b)) >= 0; ) {
                                synchronized (to) {
                                    to.write(b, 0, n);
                                }
                            }
                        } catch (IOException e) {
                            // destroyed
                        }
                    },
                    "disco-watch-output");
            t.setDaemon(true);
            t.start();
        }

        String out() {
            synchronized (out) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }

        String err() {
            synchronized (err) {
                return err.toString(StandardCharsets.UTF_8);
            }
        }

        /** Waits (bounded) until a line of the output contains every part; fails with the output and errors. */
        void awaitLine(String... parts) {
            try {
                await().atMost(WAIT)
                        .until(() -> out().lines()
                                        .anyMatch(l -> List.of(parts).stream().allMatch(l::contains))
                                || !process.isAlive());
            } finally {
                System.out.println("$ java -jar " + jar.getFileName() + " watch ...\n" + out() + err());
            }
            assertTrue(
                    out().lines().anyMatch(l -> List.of(parts).stream().allMatch(l::contains)),
                    "watch printed a line with " + List.of(parts) + ":\n" + out() + err());
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(10, SECONDS)) {
                process.destroyForcibly().waitFor(10, SECONDS);
            }
        }
    }

    private static String name(String what) {
        return CliHarness.name("jar-" + what);
    }

    private static String hex(EtcdSession s) {
        return CliHarness.hex(s);
    }

    private static void assertOk(Run r, String... parts) {
        assertTrue(r.ok(), "exit " + r.code() + ":\n" + r.out() + r.err());
        for (String part : parts) {
            assertTrue(r.out().contains(part), "the output has '" + part + "':\n" + r.out());
        }
    }

    /**
     * A name of one primitive ({@code kind}) that the claim of one session holds (its key {@code held}), while the
     * claim of another ({@code waiting}) queues behind it; {@code holders} and {@code watch} show the kind's own
     * details besides ({@code holdersAlso}, {@code acquiredAlso}).
     */
    private record Contention(
            String kind,
            String name,
            String held,
            String waiting,
            List<String> holdersAlso,
            List<String> acquiredAlso) {

        Contention(String kind, String name, String held, String waiting) {
            this(kind, name, held, waiting, List.of(), List.of());
        }

        /** What every primitive's test checks through the jar's commands while the claims contend. */
        void handOver(CompletableFuture<?> next, ThrowingRelease release) throws Exception {
            CLI.awaitKey(waiting, WAIT);
            assertOk(
                    disco("holders", name),
                    concat(List.of(kind + " " + name + ": 1 holding, 1 waiting", held), holdersAlso));
            assertOk(disco("list", name), name + " ", " " + kind + " ", "1 name at or under " + name);
            try (Watch watch = new Watch(name)) {
                watch.awaitLine("watching " + kind + " " + name);
                release.run();
                next.get(WAIT.toSeconds(), SECONDS);
                watch.awaitLine("released", held);
                watch.awaitLine(concat(List.of("acquired", waiting), acquiredAlso));
            }
        }

        private static String[] concat(List<String> parts, List<String> also) {
            List<String> all = new ArrayList<>(parts);
            all.addAll(also);
            return all.toArray(String[]::new);
        }
    }

    /** The first claim of a service. */
    private interface Claim<S> {
        void claim(S service) throws Exception;
    }

    /** @return {@code service}, once its {@code claim} holds the name */
    private static <S> S holding(S service, Claim<S> claim) throws Exception {
        claim.claim(service);
        return service;
    }

    /** The holder's release, which hands the name over to the waiter. */
    private interface ThrowingRelease {
        void run() throws Exception;
    }

    @Test
    void lock() throws Exception {
        String name = name("lock");
        try (EtcdSession a = CLI.session("jar-a");
                EtcdSession b = CLI.session("jar-b")) {
            LockService held = holding(a.newLock(name), s -> s.lock(WAIT));
            Contention c = new Contention("lock", name, name + "/" + hex(a), name + "/" + hex(b));
            c.handOver(b.newLock(name).lockAsync(), held::unlock);
            assertOk(disco("break", name, "--yes"), "broken at revision", c.waiting());
            assertOk(disco("leftovers", name), "no leftovers");
        }
    }

    @Test
    void rwlock() throws Exception {
        String name = name("rwlock");
        try (EtcdSession a = CLI.session("jar-reader");
                EtcdSession b = CLI.session("jar-writer")) {
            RWLockService reader = holding(a.newRWLock(name), s -> s.rLock(WAIT));
            new Contention("rwlock", name, name + "/read/" + hex(a), name + "/write/" + hex(b))
                    .handOver(b.newRWLock(name).lockAsync(), reader::rUnlock);
            assertOk(disco("break", name, "--yes"), "broken at revision", name + "/write/" + hex(b));
            // a reader's phase marker stays after the last reader (only a writer's admission deletes it)
            reader.rLock(WAIT);
            reader.rUnlock();
            assertOk(disco("leftovers", name), "disco-rwlock-phase:" + name);
        }
    }

    @Test
    void semaphore() throws Exception {
        String name = name("semaphore");
        try (EtcdSession a = CLI.session("jar-permit-a");
                EtcdSession b = CLI.session("jar-permit-b")) {
            SemaphoreService permits = holding(a.newSemaphore(name, 1), s -> s.acquire(WAIT));
            new Contention("semaphore", name, name + "/" + hex(a), name + "/" + hex(b))
                    .handOver(b.newSemaphore(name, 1).acquireAsync(), permits::release);
            assertOk(
                    disco("break", name, "--yes"),
                    "broken at revision",
                    name + "/" + hex(b),
                    "disco-semaphore-slot:" + name);
            // the limit record stays after the last permit
            assertOk(disco("leftovers", name), "disco-semaphore-limit:" + name);
        }
    }

    @Test
    void election() throws Exception {
        String name = name("election");
        try (EtcdSession a = CLI.session("jar-leader");
                EtcdSession b = CLI.session("jar-candidate")) {
            ElectionService leader = holding(a.newElection(name), s -> s.campaign("leader-a", WAIT));
            new Contention(
                            "election",
                            name,
                            name + "/" + hex(a),
                            name + "/" + hex(b),
                            List.of("value=leader-a"),
                            List.of("leader"))
                    .handOver(b.newElection(name).campaignAsync("candidate-b"), leader::resign);
            assertOk(disco("break", name, "--yes"), "broken at revision", name + "/" + hex(b));
            assertOk(disco("leftovers", name), "no leftovers");
        }
    }

    /**
     * The other three primitives on ZooKeeper through the jar, as {@link #zooKeeper()} the lock: {@code holders}
     * names the holder and the waiter, {@code break} deletes the holder's node and the waiter acquires with a newer
     * token, {@code leftovers} finds nothing after.
     */
    @Test
    void zooKeeperReadWriteLockSemaphoreAndElection() throws Exception {
        try (ZkClaims claims = new ZkClaims(ZK)) {
            String rw = CliHarness.name("jar-zookeeper-rw");
            RWGrant reader = claims.session().newRWLock(rw).rLock(WAIT);
            CompletableFuture<RWGrant> writer = claims.session().newRWLock(rw).lockAsync();
            String writerNode = claims.awaitQueue(rw, 2, WAIT).get(1);
            assertOk(
                    disco(onZooKeeper("holders", rw)),
                    "rwlock " + rw + ": 1 holding, 1 waiting",
                    reader.key(),
                    writerNode);
            assertOk(disco(onZooKeeper("break", rw, "--yes")), "broken at zxid", reader.key());
            assertTrue(writer.get(WAIT.toSeconds(), SECONDS).token().isNewerThan(reader.token()));

            String sem = CliHarness.name("jar-zookeeper-semaphore");
            Permit permit = claims.session().newSemaphore(sem, 1).acquire(WAIT);
            CompletableFuture<Permit> nextPermit =
                    claims.session().newSemaphore(sem, 1).acquireAsync();
            String waitingLease = claims.awaitQueue(sem + "/leases", 2, WAIT).get(1);
            assertOk(
                    disco(onZooKeeper("holders", sem)),
                    "semaphore " + sem + ": 1 holding, 1 waiting",
                    permit.key(),
                    waitingLease);
            assertOk(disco(onZooKeeper("break", sem, "--yes")), "broken at zxid", permit.key());
            assertTrue(nextPermit.get(WAIT.toSeconds(), SECONDS).token().isNewerThan(permit.token()));

            String el = CliHarness.name("jar-zookeeper-election");
            Leadership leader = claims.session().newElection(el).campaign("leader-a");
            CompletableFuture<Leadership> nextLeader =
                    claims.session().newElection(el).campaignAsync("candidate-b");
            String candidate = claims.awaitQueue(el, 2, WAIT).get(1);
            assertOk(
                    disco(onZooKeeper("holders", el, "--primitive", "ELECTION")),
                    "election " + el + ": 1 holding, 1 waiting",
                    leader.key(),
                    candidate);
            assertOk(disco(onZooKeeper("break", el, "--primitive", "ELECTION", "--yes")), "broken at zxid");
            assertTrue(nextLeader.get(WAIT.toSeconds(), SECONDS).token().isNewerThan(leader.token()));
            for (String name : List.of(rw, sem, el)) {
                assertOk(disco(onZooKeeper("leftovers", name)), "no leftovers");
            }
        }
    }

    /**
     * {@code --backend zookeeper} through the jar: ZooKeeper's client and Curator are in it (and their logging is
     * quiet: an unreachable server is one line on stderr, no stack trace of theirs), and it stays a reasonable size.
     */
    @Test
    void zooKeeper() throws Exception {
        String name = CliHarness.name("jar-zookeeper");
        try (ZkClaims claims = new ZkClaims(ZK)) {
            Grant held = claims.session().newLock(name).lock(WAIT);
            CompletableFuture<Grant> next = claims.session().newLock(name).lockAsync();
            String waiting = claims.awaitQueue(name, 2, WAIT).get(1);
            assertOk(
                    disco(onZooKeeper("holders", name)),
                    "lock " + name + ": 1 holding, 1 waiting",
                    held.key(),
                    waiting);
            assertOk(disco(onZooKeeper("list", name)), name + " ", " lock ", "1 name at or under " + name);
            try (Watch watch = new Watch(onZooKeeper("watch", name))) {
                watch.awaitLine("watching lock " + name);
                assertOk(disco(onZooKeeper("break", name, "--yes")), "broken at zxid", held.key());
                Grant successor = next.get(WAIT.toSeconds(), SECONDS);
                assertTrue(successor.token().isNewerThan(held.token()));
                watch.awaitLine("broken", held.key());
                watch.awaitLine("acquired", waiting);
            }
            assertOk(disco(onZooKeeper("leftovers", name)), "no leftovers");
        }
        Run unreachable = disco("holders", name, "--backend", "zookeeper", "--connect", "127.0.0.1:1", "--timeout=1s");
        assertEquals(ExitCode.UNREACHABLE, unreachable.code(), unreachable.err());
        assertEquals(1, unreachable.err().lines().count(), "one line, no log of ZooKeeper's: " + unreachable.err());
        assertTrue(unreachable.err().contains("connection refused"), unreachable.err());
        // etcd alone made 18 MB; ZooKeeper's client and Curator (with its shaded Guava) add 6 MB; boringssl's native
        // libraries for five platforms, which only ZooKeeper's Netty TLS client uses, would add 6 MB more
        long size = Files.size(jar);
        assertTrue(size < 28_000_000L, "the shaded jar stays below 28 MB: " + size + " bytes");
    }

    /**
     * {@code --backend redis} through the jar: Lettuce is in it (and quiet: an unreachable server is one line on
     * stderr), {@code holders}, {@code list}, {@code break} and {@code leftovers} on a lock, a read/write lock's read
     * phase and a semaphore, each broken holder's waiter acquiring with a newer token.
     */
    @Test
    void redis() throws Exception {
        try (RedisClaims claims = new RedisClaims(REDIS)) {
            String name = RedisClaims.name("jar-redis");
            Grant held = claims.session().newLock(name).lock(WAIT);
            CompletableFuture<Grant> next = claims.session().newLock(name).lockAsync();
            String waiting = claims.awaitClaimants(io.disco.core.Primitive.LOCK, name, 2, WAIT)
                    .get(1)
                    .key();
            assertOk(disco(onRedis("holders", name)), "lock " + name + ": 1 holding, 1 waiting", held.key(), waiting);
            assertOk(disco(onRedis("list", name)), name + " ", " lock ", "1 name at or under " + name);
            try (Watch watch = new Watch(onRedis("watch", name))) {
                watch.awaitLine("watching lock " + name);
                assertOk(disco(onRedis("break", name, "--yes")), "broken: deleted", "disco:{" + name + "}:c:");
                Grant successor = next.get(WAIT.toSeconds(), SECONDS);
                assertTrue(successor.token().isNewerThan(held.token()));
                watch.awaitLine("broken", held.key());
                watch.awaitLine("acquired", waiting);
            }
            assertOk(disco(onRedis("leftovers", name)), "no leftovers");

            String rw = RedisClaims.name("jar-redis-rw");
            RWGrant reader = claims.session().newRWLock(rw).rLock(WAIT);
            CompletableFuture<RWGrant> writer = claims.session().newRWLock(rw).lockAsync();
            claims.awaitClaimants(io.disco.core.Primitive.RWLOCK, rw, 2, WAIT);
            assertOk(disco(onRedis("holders", rw)), "rwlock " + rw + ": 1 holding, 1 waiting", reader.key());
            assertOk(disco(onRedis("break", rw, "--yes")), "broken: deleted", "the read phase's token");
            assertTrue(writer.get(WAIT.toSeconds(), SECONDS).token().isNewerThan(reader.token()));

            String sem = RedisClaims.name("jar-redis-semaphore");
            Permit permit = claims.session().newSemaphore(sem, 1).acquire(WAIT);
            CompletableFuture<Permit> nextPermit =
                    claims.session().newSemaphore(sem, 1).acquireAsync();
            claims.awaitClaimants(io.disco.core.Primitive.SEMAPHORE, sem, 2, WAIT);
            assertOk(disco(onRedis("holders", sem)), "semaphore " + sem + ": 1 holding, 1 waiting", permit.key());
            assertOk(disco(onRedis("break", sem, "--yes")), "broken: deleted", "(and frees its slot)");
            assertTrue(nextPermit.get(WAIT.toSeconds(), SECONDS).token().isNewerThan(permit.token()));

            // a queue entry whose claim is gone: found, and deleted
            String left = RedisClaims.name("jar-redis-leftover");
            claims.admin().zadd(io.disco.provider.redis.RedisKeys.queue(left), 1, "00000000deadbeef");
            assertOk(disco(onRedis("leftovers", left)), "queue-entry", "1 leftover; --delete deletes it");
            assertOk(disco(onRedis("leftovers", left, "--delete")), "deleted 1 of 1 leftover");
            for (String n : List.of(rw, sem, left)) {
                assertOk(disco(onRedis("leftovers", n)), "no leftovers");
            }
        }
        Run unreachable =
                disco("holders", "/x", "--backend", "redis", "--redis-uri", "redis://127.0.0.1:1", "--timeout=1s");
        assertEquals(ExitCode.UNREACHABLE, unreachable.code(), unreachable.err());
        assertEquals(1, unreachable.err().lines().count(), "one line, no log of Lettuce's: " + unreachable.err());
        assertTrue(unreachable.err().contains("connection refused"), unreachable.err());
        // etcd and ZooKeeper made 24.4 MB; Lettuce and reactor-core add 4.2 MB, and Google's common protos that no
        // class of the tool uses are left out (2 MB)
        long size = Files.size(jar);
        assertTrue(size < 28_000_000L, "the shaded jar stays below 28 MB: " + size + " bytes");
    }

    /** The exit code of a usage error and of a name nobody holds reach the shell from the jar's main. */
    @Test
    void exitCodesReachTheShell() throws Exception {
        assertEquals(ExitCode.NOTHING_HELD, disco("holders", name("nobody")).code());
        Run usage = disco("holders", "/x/");
        assertEquals(ExitCode.USAGE, usage.code(), usage.err());
        assertEquals(1, usage.err().lines().count(), "one line: " + usage.err());
    }
}
