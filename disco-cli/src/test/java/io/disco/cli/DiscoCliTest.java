package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.EtcdTls;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The commands of {@code disco} against a real etcd (the shared member), each run in this JVM with its output captured. */
class DiscoCliTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final CliHarness CLI = new CliHarness(ETCD);

    private static CliHarness.Run disco(String stdin, String... args) {
        return CLI.disco(stdin, args);
    }

    private static EtcdSession session(String clientId) {
        return CLI.session(clientId);
    }

    private static String name(String what) {
        return CliHarness.name(what);
    }

    private static String hex(EtcdSession s) {
        return CliHarness.hex(s);
    }

    @Test
    void holdersListsTheHolderThenTheWaiterWithTokenLeaseTtlAndMetadata() throws Exception {
        String name = name("holders");
        try (EtcdSession a = session("orders-a");
                EtcdSession b = session("orders-b")) {
            CliHarness.LockQueue q = CLI.lockQueue(name, a, b, WAIT);

            CliHarness.Run r = disco("", "holders", name);
            assertEquals(0, r.code(), r.err());
            List<String> lines = r.out().lines().toList();
            assertTrue(lines.get(0).startsWith("lock " + name + ": 1 holding, 1 waiting"), lines.get(0));
            String holder = lines.get(2);
            String waiter = lines.get(3);
            assertTrue(
                    holder.startsWith("holder") && holder.contains(name + "/" + hex(a)) && holder.contains(hex(a)),
                    holder);
            FencingToken token = q.grant().token();
            assertTrue(holder.contains(" " + token.value() + " "), "the holder's token " + token + ": " + holder);
            assertTrue(
                    holder.contains("pid=" + ProcessHandle.current().pid())
                            && holder.contains("client=orders-a")
                            && holder.contains(
                                    "thread=" + Thread.currentThread().getName())
                            && holder.contains("claimed-at="),
                    holder);
            Matcher ttl = Pattern.compile(" (\\d+)s ").matcher(holder);
            assertTrue(
                    ttl.find() && Integer.parseInt(ttl.group(1)) <= 20 && Integer.parseInt(ttl.group(1)) > 0,
                    "TTL left: " + holder);
            assertTrue(
                    waiter.startsWith("waiter")
                            && waiter.contains(name + "/" + hex(b))
                            && waiter.contains("client=orders-b"),
                    waiter);

            CliHarness.Run election = disco("", "holders", name, "--primitive", "ELECTION");
            assertEquals(0, election.code(), election.err());
            assertTrue(election.out().contains("leader"), election.out());
            q.holder().unlock();
            q.next().get(10, SECONDS);
            q.waiter().unlock();
        }
    }

    @Test
    void anUnknownNameSaysNothingHoldsItWithExitCode3() {
        String name = name("nobody");
        CliHarness.Run r = disco("", "holders", name);
        assertEquals(ExitCode.NOTHING_HELD, r.code());
        assertTrue(r.err().contains("nothing holds or waits for " + name), r.err());
        assertEquals(ExitCode.NOTHING_HELD, disco("", "break", name, "--yes").code());
        // watch waits for a name nobody uses yet (DiscoWatchTest)
    }

    @Test
    void breakAsksThenDeletesTheHolderWhoLosesItAndWhoseTokenAGuardRejectsAfterTheNextHolders() throws Exception {
        String name = name("break");
        try (EtcdSession a = session("zombie");
                EtcdSession b = session("next")) {
            CliHarness.LockQueue q = CLI.lockQueue(name, a, b, WAIT);
            LockService la = q.holder();
            Grant zombie = q.grant();
            Guard guard = Guard.create();
            guard.check(zombie.token()); // the zombie wrote before it was broken

            CliHarness.Run declined = disco("n\n", "break", name);
            assertEquals(ExitCode.NOT_BROKEN, declined.code(), declined.err());
            assertTrue(declined.out().contains("not confirmed: nothing deleted"), declined.out());
            assertTrue(la.err().isEmpty(), "nothing was deleted");

            CliHarness.Run r = disco("y\n", "break", name);
            assertEquals(0, r.code(), r.err());
            assertTrue(r.out().contains("deletes: " + name + "/" + hex(a)), r.out());
            assertTrue(
                    r.out()
                            .contains("the next holder's token will exceed "
                                    + zombie.token().value()),
                    r.out());
            Matcher at = Pattern.compile("broken at revision (\\d+)").matcher(r.out());
            assertTrue(at.find(), r.out());
            long revision = Long.parseLong(at.group(1));

            la.done().toCompletableFuture().get(10, SECONDS);
            assertInstanceOf(LockLostException.class, la.err().orElseThrow());
            Grant successor = q.next().get(10, SECONDS);
            assertTrue(successor.token().value() >= revision, successor.token() + " is at least " + revision);
            guard.check(successor.token());
            assertThrows(TokenStaleException.class, () -> guard.check(zombie.token()));
            q.waiter().unlock();
        }
    }

    /**
     * An election's next leader holds the token of a key it made before the break, below the delete's revision: the
     * mark the tool prints must admit it and reject the broken leader (a mark at the revision rejected both).
     */
    @Test
    void breakOfALeaderPrintsAMarkThatRejectsItAndAdmitsTheNextLeader() throws Exception {
        String name = name("break-leader");
        try (EtcdSession a = session("zombie");
                EtcdSession b = session("next");
                ElectionService ea = a.newElection(name);
                ElectionService eb = b.newElection(name)) {
            Leadership zombie = ea.campaign("a");
            java.util.concurrent.CompletableFuture<Leadership> next = eb.campaignAsync("b");
            org.awaitility.Awaitility.await()
                    .atMost(WAIT)
                    .until(() -> disco("", "holders", name, "--primitive", "ELECTION")
                            .out()
                            .contains(hex(b)));

            CliHarness.Run r = disco("y\n", "break", name, "--primitive", "ELECTION");
            assertEquals(0, r.code(), r.err());
            Matcher mark = Pattern.compile("raise the guard's mark to (\\d+)").matcher(r.out());
            assertTrue(mark.find(), r.out());
            Guard guard = Guard.withInitialToken(Long.parseLong(mark.group(1)));

            Leadership successor = next.get(10, SECONDS);
            guard.check(successor.token()); // admitted
            assertThrows(TokenStaleException.class, () -> guard.check(zombie.token()));
        }
    }

    @Test
    void breakOfAReadPhaseEndsEveryReaderAndItsMarker() throws Exception {
        String name = name("readers");
        try (EtcdSession a = session("reader-a");
                EtcdSession b = session("reader-b")) {
            RWLockService ra = a.newRWLock(name);
            RWLockService rb = b.newRWLock(name);
            FencingToken phase = ra.rLock(WAIT).token();
            assertEquals(phase, rb.rLock(WAIT).token(), "readers of one phase share a token");
            CliHarness.Run refused = disco("", "break", name, "--yes", "--holder", name + "/read/" + hex(a));
            assertEquals(ExitCode.USAGE, refused.code());
            CliHarness.Run r = disco("", "break", name, "--yes");
            assertEquals(0, r.code(), r.err());
            assertTrue(r.out().contains("disco-rwlock-phase:" + name), r.out());
            ra.done().toCompletableFuture().get(10, SECONDS);
            rb.done().toCompletableFuture().get(10, SECONDS);
            try (EtcdSession c = session("reader-c")) {
                assertTrue(c.newRWLock(name).rLock(WAIT).token().isNewerThan(phase), "the next reader has a new token");
            }
        }
    }

    @Test
    void breakOfASemaphorePermitNamesTheHolderAndDeletesItsSlot() throws Exception {
        String name = name("semaphore");
        try (EtcdSession a = session("permit-a");
                EtcdSession b = session("permit-b")) {
            SemaphoreService sa = a.newSemaphore(name, 2);
            SemaphoreService sb = b.newSemaphore(name, 2);
            Permit pa = sa.acquire(WAIT);
            sb.acquire(WAIT);
            CliHarness.Run holders = disco("", "holders", name);
            assertEquals(0, holders.code(), holders.err());
            assertTrue(holders.out().startsWith("semaphore " + name + ": 2 holding, 0 waiting"), holders.out());
            assertTrue(
                    holders.out().contains(" " + pa.token().value() + " "),
                    "the permit's slot token: " + holders.out());

            CliHarness.Run ambiguous = disco("", "break", name, "--yes");
            assertEquals(ExitCode.USAGE, ambiguous.code());
            assertTrue(ambiguous.err().contains("2 permits of " + name + " are held"), ambiguous.err());
            CliHarness.Run r = disco("", "break", name, "--yes", "--holder", pa.key());
            assertEquals(0, r.code(), r.err());
            String slot = "disco-semaphore-slot:" + name + "/" + pa.slot();
            assertTrue(r.out().contains(slot), r.out());
            sa.done().toCompletableFuture().get(10, SECONDS);
            assertEquals(0, CLI.count(slot));
            sb.release();
        }
    }

    /**
     * A nested name's keys lie under the parent's prefix (and a parent's claimant queues behind them), but they are
     * never the parent's holders: holders shows whose they are, and break of the parent leaves them unless named.
     */
    @Test
    void aNestedNamesHolderIsShownAsItsNamesAndBreakOfTheParentLeavesIt() throws Exception {
        String parent = name("nested");
        String child = parent + "/orders";
        try (EtcdSession a = session("child-holder");
                EtcdSession c = session("parent-waiter")) {
            LockService childLock = a.newLock(child);
            LockService parentLock = c.newLock(parent);
            childLock.lock(WAIT);
            CompletableFuture<Grant> parentGrant = parentLock.lockAsync(); // one way: it waits for the child's holder
            CLI.awaitKey(parent + "/" + hex(c), WAIT);

            CliHarness.Run holders = disco("", "holders", parent);
            assertEquals(0, holders.code(), holders.err());
            List<String> lines = holders.out().lines().toList();
            assertTrue(lines.get(0).startsWith("lock " + parent + ": 0 holding, 1 waiting"), lines.get(0));
            String nested = lines.stream()
                    .filter(l -> l.contains(child + "/" + hex(a)))
                    .findFirst()
                    .orElseThrow();
            assertTrue(nested.startsWith("nested") && nested.contains(" " + child + " "), "whose key it is: " + nested);
            String own = lines.stream()
                    .filter(l -> l.contains(parent + "/" + hex(c)))
                    .findFirst()
                    .orElseThrow();
            assertTrue(own.startsWith("waiter") && own.contains(" " + parent + " "), own);
            assertTrue(
                    holders.out().contains("disco holders " + child),
                    "it says where the nested holder is: " + holders.out());

            CliHarness.Run refused = disco("", "break", parent, "--yes");
            assertEquals(ExitCode.NOTHING_HELD, refused.code(), refused.out());
            assertTrue(refused.err().contains(child), "it names the nested name: " + refused.err());
            assertTrue(childLock.err().isEmpty(), "the nested name's holder was not broken");
            assertEquals(1, CLI.count(child + "/" + hex(a)));

            CliHarness.Run named = disco("", "break", parent, "--yes", "--holder", child + "/" + hex(a));
            assertEquals(0, named.code(), named.err());
            assertTrue(named.out().contains("deletes: " + child + "/" + hex(a)), named.out());
            childLock.done().toCompletableFuture().get(10, SECONDS);
            parentGrant.get(10, SECONDS);
            parentLock.unlock();
        }
    }

    /** A name or an option the tool cannot use is a usage error: exit 2 and one line, never a stack trace. */
    @Test
    void badNamesAndOptionsAreUsageErrorsOfOneLine() {
        String[][] cases = {
            {"holders", ""},
            {"holders", "  "},
            {"holders", "/x/"},
            {"break", "/x/", "--yes"},
            {"watch", "/x//"},
            {"holders", "/"},
            {"holders", "/x\u0001"},
            {"holders", "/x", "--endpoints="},
            {"holders", "/x", "--endpoints=,"},
            {"holders", "/x", "--endpoints=http://"},
            {"holders", "/x", "--endpoints=http://127.0.0.1:notaport"},
            {"leftovers", "--endpoints= "},
        };
        for (String[] args : cases) {
            CliHarness.Run r = disco("", args);
            assertEquals(ExitCode.USAGE, r.code(), String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().startsWith("disco: ") && r.err().lines().count() == 1, "one line: " + r.err());
            assertTrue(!r.err().contains("Exception"), "no exception's name: " + r.err());
        }
        assertTrue(disco("", "holders", "/x/").err().contains("use '/x'"), "it says what to use");

        // names etcdctl and Go programs make (not absolute, '//' ...) are read, with a note that the client refuses
        // them
        String goName = "go-lock-" + UUID.randomUUID();
        CliHarness.Run go = disco("", "holders", goName);
        assertEquals(ExitCode.NOTHING_HELD, go.code(), go.err());
        assertTrue(go.err().contains("nothing holds or waits for " + goName), go.err());
    }

    /** TLS with a client certificate and etcd authentication: the connection flags reach a secured cluster. */
    @Test
    void theConnectionFlagsReachAClusterWithMutualTlsAndAuthentication() throws Exception {
        EtcdTls tls = EtcdTls.generate(true, "root");
        try (EtcdCluster secured = EtcdCluster.start(1, tls)) {
            secured.enableAuth("secret");
            String name = name("secured");
            String[] flags = {
                "--endpoints=" + String.join(",", secured.endpoints()),
                "--cacert=" + tls.caFile(),
                "--cert=" + tls.clientCertFile(),
                "--key=" + tls.clientKeyFile()
            };
            try (Client root = Client.builder()
                            .endpoints(secured.endpoints().toArray(String[]::new))
                            .sslContext(b -> b.trustManager(tls.caFile().toFile())
                                    .keyManager(
                                            tls.clientCertFile().toFile(),
                                            tls.clientKeyFile().toFile()))
                            .user(ByteSequence.from("root", StandardCharsets.UTF_8))
                            .password(ByteSequence.from("secret", StandardCharsets.UTF_8))
                            .build();
                    EtcdSession s = EtcdSession.open(
                            root,
                            EtcdOptions.builder()
                                    .ttl(Duration.ofSeconds(20))
                                    .clientId("secured")
                                    .build())) {
                Grant g = s.newLock(name).lock(WAIT);
                List<String> args = new ArrayList<>(List.of("holders", name, "--user", "root:secret"));
                args.addAll(List.of(flags));
                CliHarness.Run r = disco("", args.toArray(String[]::new));
                assertEquals(0, r.code(), r.err());
                assertTrue(
                        r.out().contains("client=secured")
                                && r.out().contains(" " + g.token().value() + " "),
                        r.out());

                args.set(3, "root:wrong");
                CliHarness.Run wrong = disco("", args.toArray(String[]::new));
                assertEquals(ExitCode.FAILED, wrong.code(), wrong.out());
                assertTrue(
                        wrong.err().contains("etcd at https://") && wrong.err().contains("check --user and --password"),
                        wrong.err());
            }
        }
    }

    @Test
    void leftoversFindsAStaleMarkerAndDeletesIt() throws Exception {
        String prefix = name("leftovers");
        String name = prefix + "/rw";
        try (EtcdSession a = session("reader")) {
            RWLockService rw = a.newRWLock(name);
            rw.rLock(WAIT);
            CliHarness.Run inUse = disco("", "leftovers", prefix);
            assertEquals(0, inUse.code(), inUse.err());
            assertTrue(inUse.out().contains("no leftovers"), "a marker of a held name is no leftover: " + inUse.out());
            rw.rUnlock(); // the marker stays: only a writer's admission deletes it
        }
        CliHarness.Run found = disco("", "leftovers", prefix);
        assertEquals(0, found.code(), found.err());
        assertTrue(
                found.out().contains("rwlock-phase") && found.out().contains("disco-rwlock-phase:" + name),
                found.out());
        assertTrue(found.out().contains("1 leftover; --delete"), found.out());

        CliHarness.Run deleted = disco("", "leftovers", prefix, "--delete");
        assertEquals(0, deleted.code(), deleted.err());
        assertTrue(deleted.out().contains("deleted 1 of 1 leftover"), deleted.out());
        assertEquals(0, CLI.count("disco-rwlock-phase:" + name));
        assertTrue(disco("", "leftovers", prefix).out().contains("no leftovers"));
    }

    @Test
    void watchPrintsTheHandOver() throws Exception {
        String name = name("watch");
        try (EtcdSession a = session("first");
                EtcdSession b = session("second")) {
            CliHarness.LockQueue q = CLI.lockQueue(name, a, b, WAIT);

            CliHarness.Watching watch = CLI.new Watching("watch", name);
            try {
                await().atMost(WAIT).until(() -> watch.printed("watching lock " + name));
                q.holder().unlock();
                Grant successor = q.next().get(10, SECONDS);
                // A lock holder that waited has its token recorded in its key once it has held for 50 ms:
                // "acquired" says token=recording until then, and a "token" line follows.
                await().atMost(WAIT)
                        .until(() -> watch.printed(
                                name + "/" + hex(b),
                                "token=" + successor.token().value()));
                assertTrue(watch.printed("acquired", name + "/" + hex(b)), watch.text());
                assertTrue(watch.printed("released", name + "/" + hex(a)), watch.text());
            } finally {
                watch.close();
            }
            assertEquals(0, watch.code(), "watch ends with 0 when interrupted");
            q.waiter().unlock();
        }
    }

    @Test
    void anUnreachableClusterTimesOutNamingTheEndpoints() {
        long start = System.nanoTime();
        CliHarness.Run r =
                disco("", "holders", "/locks/x", "--endpoints", "http://127.0.0.1:1", "--command-timeout", "1s");
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(ExitCode.UNREACHABLE, r.code(), r.err());
        assertTrue(r.err().contains("no answer from etcd at http://127.0.0.1:1 within 1 s"), r.err());
        assertTrue(ms < 5000, "a timeout, not a hang: " + ms + " ms");
    }

    /** The real main in its own JVM: the exit code reaches the shell, and jetcd's threads do not keep the JVM alive. */
    @Test
    void mainExitsWithTheCodeInItsOwnProcess() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        DiscoCli.class.getName(),
                        "holders",
                        "/locks/x",
                        "--endpoints",
                        "127.0.0.1:1",
                        "--command-timeout",
                        "1s")
                .redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(20, SECONDS), "the process ended");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(ExitCode.UNREACHABLE, p.exitValue(), output);
        assertTrue(output.contains("no answer from etcd at http://127.0.0.1:1"), output);
    }
}
