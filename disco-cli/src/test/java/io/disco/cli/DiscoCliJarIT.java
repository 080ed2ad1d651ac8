package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdOptions;
import io.disco.provider.etcd.EtcdSession;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.SemaphoreService;
import io.disco.testing.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shipped tool, not the reactor's classpath: {@code java -jar target/disco-cli-<version>-all.jar}, each command
 * in its own process, on every primitive, against a throwaway etcd. Runs in the {@code integration-test} phase,
 * after the shade step wrote the jar (the {@code jar-it} execution of disco-cli's POM passes its path as
 * {@code disco.cli.jar}); a jar that lacks a class a command needs (as it once lacked disco-rwlock, declared with
 * test scope) fails here with the process's {@code NoClassDefFoundError}.
 */
class DiscoCliJarIT {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static Path jar;
    private static Client client;

    @BeforeAll
    static void connect() {
        String path = System.getProperty("disco.cli.jar");
        assertNotNull(path, "the built jar's path (disco.cli.jar) is set by the jar-it execution of the integration-test"
                + " phase: run mvn -pl disco-cli verify, not -Dtest=DiscoCliJarIT in the test phase");
        jar = Path.of(path);
        assertTrue(Files.isRegularFile(jar), "the shaded jar " + jar + " exists (mvn -pl disco-cli package)");
        client = Client.builder().endpoints(ETCD.cluster().endpoints().toArray(String[]::new)).build();
    }

    @AfterAll
    static void disconnect() {
        if (client != null) {
            client.close();
        }
    }

    /** One finished process: exit code and its output. */
    record Run(int code, String out, String err) {
        boolean ok() {
            return code == 0 && !err.contains("NoClassDefFoundError") && !err.contains("ClassNotFoundException");
        }
    }

    private static ProcessBuilder command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-jar", jar.toString()));
        cmd.addAll(List.of(args));
        cmd.add("--endpoints=" + String.join(",", ETCD.cluster().endpoints()));
        return new ProcessBuilder(cmd);
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
        System.out.println("$ java -jar " + jar.getFileName() + " " + String.join(" ", args) + "  -> " + r.code() + "\n" + r.out() + r.err());
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
            process = command("watch", name).start();
            process.getOutputStream().close();
            copy(process.getInputStream(), out);
            copy(process.getErrorStream(), err);
        }

        private static void copy(InputStream in, ByteArrayOutputStream to) {
            Thread t = new Thread(() -> {
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
            }, "disco-watch-output");
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
                await().atMost(WAIT).until(() -> out().lines().anyMatch(l -> List.of(parts).stream().allMatch(l::contains))
                        || !process.isAlive());
            } finally {
                System.out.println("$ java -jar " + jar.getFileName() + " watch ...\n" + out() + err());
            }
            assertTrue(out().lines().anyMatch(l -> List.of(parts).stream().allMatch(l::contains)),
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

    private static EtcdSession session(String clientId) {
        return EtcdSession.open(client, EtcdOptions.builder().ttl(Duration.ofSeconds(20)).clientId(clientId).build());
    }

    private static String name(String what) {
        return "/test/cli-jar/" + what + "/" + UUID.randomUUID();
    }

    private static String hex(EtcdSession s) {
        return Long.toHexString(s.leaseId());
    }

    private static void awaitKey(String key) {
        await().atMost(WAIT).until(() -> client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8))
                .get(5, SECONDS).getCount() == 1);
    }

    private static void assertOk(Run r, String... parts) {
        assertTrue(r.ok(), "exit " + r.code() + ":\n" + r.out() + r.err());
        for (String part : parts) {
            assertTrue(r.out().contains(part), "the output has '" + part + "':\n" + r.out());
        }
    }

    @Test
    void lock() throws Exception {
        String name = name("lock");
        try (EtcdSession a = session("jar-a"); EtcdSession b = session("jar-b")) {
            LockService la = a.newLock(name);
            LockService lb = b.newLock(name);
            la.lock(WAIT);
            CompletableFuture<?> next = lb.lockAsync();
            awaitKey(name + "/" + hex(b));
            assertOk(disco("holders", name), "lock " + name + ": 1 holding, 1 waiting", name + "/" + hex(a));
            assertOk(disco("list", name), name + " ", " lock ", "1 name at or under " + name);
            try (Watch watch = new Watch(name)) {
                watch.awaitLine("watching lock " + name);
                la.unlock();
                next.get(WAIT.toSeconds(), SECONDS);
                watch.awaitLine("released", name + "/" + hex(a));
                watch.awaitLine("acquired", name + "/" + hex(b));
            }
            assertOk(disco("break", name, "--yes"), "broken at revision", name + "/" + hex(b));
            assertOk(disco("leftovers", name), "no leftovers");
        }
    }

    @Test
    void rwlock() throws Exception {
        String name = name("rwlock");
        try (EtcdSession a = session("jar-reader"); EtcdSession b = session("jar-writer")) {
            RWLockService reader = a.newRWLock(name);
            RWLockService writer = b.newRWLock(name);
            reader.rLock(WAIT);
            CompletableFuture<?> next = writer.lockAsync();
            awaitKey(name + "/write/" + hex(b));
            assertOk(disco("holders", name), "rwlock " + name + ": 1 holding, 1 waiting", name + "/read/" + hex(a));
            assertOk(disco("list", name), name + " ", " rwlock ", "1 name at or under " + name);
            try (Watch watch = new Watch(name)) {
                watch.awaitLine("watching rwlock " + name);
                reader.rUnlock();
                next.get(WAIT.toSeconds(), SECONDS);
                watch.awaitLine("released", name + "/read/" + hex(a));
                watch.awaitLine("acquired", name + "/write/" + hex(b));
            }
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
        try (EtcdSession a = session("jar-permit-a"); EtcdSession b = session("jar-permit-b")) {
            SemaphoreService sa = a.newSemaphore(name, 1);
            SemaphoreService sb = b.newSemaphore(name, 1);
            sa.acquire(WAIT);
            CompletableFuture<?> next = sb.acquireAsync();
            awaitKey(name + "/" + hex(b));
            assertOk(disco("holders", name), "semaphore " + name + ": 1 holding, 1 waiting", name + "/" + hex(a));
            assertOk(disco("list", name), name + " ", " semaphore ", "1 name at or under " + name);
            try (Watch watch = new Watch(name)) {
                watch.awaitLine("watching semaphore " + name);
                sa.release();
                next.get(WAIT.toSeconds(), SECONDS);
                watch.awaitLine("released", name + "/" + hex(a));
                watch.awaitLine("acquired", name + "/" + hex(b));
            }
            assertOk(disco("break", name, "--yes"), "broken at revision", name + "/" + hex(b), "disco-semaphore-slot:" + name);
            // the limit record stays after the last permit
            assertOk(disco("leftovers", name), "disco-semaphore-limit:" + name);
        }
    }

    @Test
    void election() throws Exception {
        String name = name("election");
        try (EtcdSession a = session("jar-leader"); EtcdSession b = session("jar-candidate")) {
            ElectionService ea = a.newElection(name);
            ElectionService eb = b.newElection(name);
            ea.campaign("leader-a", WAIT);
            CompletableFuture<?> next = eb.campaignAsync("candidate-b");
            awaitKey(name + "/" + hex(b));
            assertOk(disco("holders", name), "election " + name + ": 1 holding, 1 waiting", name + "/" + hex(a), "value=leader-a");
            assertOk(disco("list", name), name + " ", " election ", "1 name at or under " + name);
            try (Watch watch = new Watch(name)) {
                watch.awaitLine("watching election " + name);
                ea.resign();
                next.get(WAIT.toSeconds(), SECONDS);
                watch.awaitLine("released", name + "/" + hex(a));
                watch.awaitLine("acquired", "leader", name + "/" + hex(b));
            }
            assertOk(disco("break", name, "--yes"), "broken at revision", name + "/" + hex(b));
            assertOk(disco("leftovers", name), "no leftovers");
        }
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
