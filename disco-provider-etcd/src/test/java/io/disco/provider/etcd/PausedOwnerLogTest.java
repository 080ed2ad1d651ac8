package io.disco.provider.etcd;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a paused owner logs when it wakes up (issue 45, item 6): a process holding a lock, a read lock and a
 * semaphore permit is stopped (SIGSTOP, as by a long GC pause) until etcd has expired its lease and deleted
 * its keys, then continued. It logs the lease's expiry as an expiry, never as keys "deleted ... not by this
 * owner" (which reads like an operator's break), and any token it prints is the hold's real token, not a
 * key's create revision (a reader's token is its phase's, a permit's its slot's).
 */
class PausedOwnerLogTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void anExpiredLeaseIsLoggedAsExpiredWithTheRealTokens() throws Exception {
        String prefix = Etcd.uniquePrefix("paused-owner");
        Process child = new ProcessBuilder(
                        ProcessHandle.current().info().command().orElseThrow(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        PausedOwnerChild.class.getName(),
                        String.join(",", ETCD.cluster().endpoints()),
                        prefix)
                .start();
        StringBuffer out = new StringBuffer();
        StringBuffer err = new StringBuffer();
        Set<String> tokens;
        CompletableFuture<Void> outRead =
                CompletableFuture.runAsync(() -> copy(child.getInputStream(), out), PausedOwnerLogTest::thread);
        CompletableFuture<Void> errRead =
                CompletableFuture.runAsync(() -> copy(child.getErrorStream(), err), PausedOwnerLogTest::thread);
        try (Client client = Etcd.client(ETCD.cluster())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> out.toString().contains("HELD") || !child.isAlive());
            assertTrue(out.toString().contains("HELD"), out + "\n" + err);
            Matcher m = Pattern.compile("TOKENS lock=(\\d+) read=(\\d+) permit=(\\d+)")
                    .matcher(out);
            assertTrue(m.find(), out.toString());
            tokens = Set.of(m.group(1), m.group(2), m.group(3));
            System.out.println("the child's tokens: " + m.group());

            signal(child, "STOP");
            // paused until etcd expired its lease: its keys are gone
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() ->
                            Etcd.keysUnder(client, prefix).stream().noneMatch(k -> !k.contains("disco-rwlock-phase")));
            signal(child, "CONT");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> err.toString().contains("lost with it") || !child.isAlive());
        } finally {
            // the child closes its client and exits: everything it logs about the pause is logged by then
            child.getOutputStream().close();
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
        outRead.get(10, TimeUnit.SECONDS);
        errRead.get(10, TimeUnit.SECONDS);
        String log = err.toString();
        System.out.println("the child's log:\n" + log);
        List<String> lines = log.lines()
                .filter(l -> l.contains("WARN") || l.contains("INFO"))
                .toList();
        assertTrue(
                lines.stream().noneMatch(l -> l.contains("not by this owner")),
                "no held key 'deleted not by this owner':\n" + log);
        assertTrue(
                lines.stream().anyMatch(l -> l.contains("expired")), "the lease's expiry is logged as such:\n" + log);
        Matcher token = Pattern.compile("token (\\d+)").matcher(log);
        while (token.find()) {
            assertTrue(
                    tokens.contains(token.group(1)),
                    "token " + token.group(1) + " is none of the holds' " + tokens + ":\n" + log);
        }
    }

    private static void thread(Runnable r) {
        Thread t = new Thread(r, "child-output");
        t.setDaemon(true);
        t.start();
    }

    private static void signal(Process p, String signal) throws Exception {
        int rc = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
                .inheritIO()
                .start()
                .waitFor();
        assertTrue(rc == 0, "kill -" + signal + " failed");
    }

    private static void copy(java.io.InputStream in, StringBuffer into) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                into.append(line).append('\n');
            }
        } catch (java.io.IOException e) {
            // the child ended
        }
    }
}
