package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.EtcdExtension;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What on-call asks and {@code disco} answers (issue 51, item 4): the names in use under a prefix, since when a
 * holder holds (not only when it claimed), and why the cluster cannot be reached.
 */
class DiscoOnCallTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final java.time.Duration WAIT = java.time.Duration.ofSeconds(10);

    private static final CliHarness CLI = new CliHarness(ETCD);

    @Test
    void listShowsEveryNameUnderAPrefixWithItsKindHoldersWaitersTokenAndHeldSince() throws Exception {
        String prefix = CliHarness.name("list");
        try (EtcdSession a = CLI.session("a");
                EtcdSession b = CLI.session("b");
                EtcdSession c = CLI.session("c")) {
            Grant order = a.newLock(prefix + "/orders").lock(WAIT);
            CompletableFuture<Grant> waiting = b.newLock(prefix + "/orders").lockAsync();
            CLI.awaitKey(prefix + "/orders/" + CliHarness.hex(b), WAIT);
            a.newRWLock(prefix + "/catalog").rLock(WAIT);
            b.newRWLock(prefix + "/catalog").rLock(WAIT);
            a.newSemaphore(prefix + "/pool", 3).acquire(WAIT);
            b.newElection(prefix + "/leader").campaign("b-proposal");
            c.newLock(prefix + "/orders/archive").lock(WAIT); // a nested name: its own line, not a holder of /orders

            CliHarness.Run r = CLI.disco("", "list", prefix);
            assertEquals(0, r.code(), r.err());
            List<String> lines = r.out().lines().toList();
            assertTrue(lines.get(0).matches("NAME +KIND +HOLDING +WAITING +TOKEN +HELD-SINCE"), lines.get(0));
            assertEquals(
                    List.of(
                            prefix + "/catalog rwlock 2 0",
                            prefix + "/leader election 1 0",
                            prefix + "/orders lock 1 1",
                            prefix + "/orders/archive lock 1 0",
                            prefix + "/pool semaphore 1 0"),
                    lines.subList(1, 6).stream()
                            .map(l -> String.join(
                                    " ", List.of(l.trim().split(" +")).subList(0, 4)))
                            .toList());
            String orders = lines.get(3);
            assertTrue(orders.contains(" " + order.token().value() + " "), "the holder's token: " + orders);
            assertTrue(
                    Pattern.compile("\\d{4}-\\d\\d-\\d\\dT").matcher(orders).find(), "since when it holds: " + orders);
            assertTrue(
                    Pattern.compile("\\d{4}-\\d\\d-\\d\\dT")
                            .matcher(lines.get(1))
                            .find(),
                    "readers who did not wait: " + lines.get(1));
            assertTrue(lines.get(6).startsWith("5 names at or under " + prefix), lines.get(6));

            CliHarness.Run one = CLI.disco("", "list", prefix + "/orders");
            assertEquals(0, one.code(), one.err());
            assertEquals(
                    2,
                    one.out().lines().filter(l -> l.startsWith(prefix)).count(),
                    "the name and the one under it: " + one.out());

            CliHarness.Run none = CLI.disco("", "list", prefix + "/nothing");
            assertEquals(ExitCode.NOTHING_HELD, none.code());
            assertTrue(none.err().contains("no name in use at or under " + prefix + "/nothing"), none.err());
            assertEquals(ExitCode.USAGE, CLI.disco("", "list", prefix + "/").code());
            waiting.cancel(true);
        }
    }

    /** A holder that waited holds from when its predecessor let go, not from when it claimed: both are shown. */
    @Test
    void holdersShowsWhenTheHoldBeganBesideWhenItWasClaimed() throws Exception {
        String name = CliHarness.name("since");
        try (EtcdSession a = CLI.session("a");
                EtcdSession b = CLI.session("b")) {
            CliHarness.LockQueue q = CLI.lockQueue(name, a, b, WAIT);

            CliHarness.Run first = CLI.disco("", "holders", name);
            String holder = first.out()
                    .lines()
                    .filter(l -> l.startsWith("holder"))
                    .findFirst()
                    .orElseThrow();
            assertEquals(field(holder, "claimed-at"), field(holder, "held-since"), "it did not wait: " + holder);
            assertFalse(
                    first.out()
                            .lines()
                            .filter(l -> l.startsWith("waiter"))
                            .findFirst()
                            .orElseThrow()
                            .contains("held-since"),
                    "a waiter holds nothing");

            Instant released = Instant.now();
            q.holder().unlock();
            Grant g = q.next().get(10, SECONDS);
            Instant granted = Instant.now();
            // the token and the start of the hold are recorded in the key just after the grant
            await().atMost(WAIT)
                    .until(() -> CLI.disco("", "holders", name)
                            .out()
                            .contains(" " + g.token().value() + " "));
            String waited = CLI.disco("", "holders", name)
                    .out()
                    .lines()
                    .filter(l -> l.startsWith("holder"))
                    .findFirst()
                    .orElseThrow();
            Instant since = Instant.parse(field(waited, "held-since"));
            Instant claimed = Instant.parse(field(waited, "claimed-at"));
            assertTrue(claimed.isBefore(released), "claimed while the first held: " + waited);
            assertTrue(
                    !since.isBefore(released.minusMillis(1)) && !since.isAfter(granted.plusMillis(1)),
                    "holds since the hand-over (" + released + " .. " + granted + "): " + waited);
        }
    }

    @Test
    void connectionErrorsNameTheEndpointAndTheCause() {
        CliHarness.Run refused =
                CLI.disco("", "holders", "/locks/x", "--endpoints", "http://127.0.0.1:1", "--command-timeout", "1s");
        assertEquals(ExitCode.UNREACHABLE, refused.code(), refused.err());
        assertTrue(
                refused.err().contains("etcd at http://127.0.0.1:1")
                        && refused.err().contains("connection refused"),
                refused.err());

        CliHarness.Run dns = CLI.disco(
                "", "list", "/locks", "--endpoints", "http://no-such-host.invalid:2379", "--command-timeout", "1s");
        assertEquals(ExitCode.UNREACHABLE, dns.code(), dns.err());
        assertTrue(
                dns.err().contains("etcd at http://no-such-host.invalid:2379")
                        && dns.err().contains("unknown host"),
                dns.err());
    }

    private static String field(String line, String name) {
        Matcher m = Pattern.compile(name + "=(\\S+)").matcher(line);
        assertTrue(m.find(), name + " in " + line);
        return m.group(1);
    }
}
