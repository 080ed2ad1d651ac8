package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.ClaimMetadata;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.provider.etcd.EtcdSession;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.TcpProxy;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.PutOption;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code disco watch} for on-call use (issue 51, item 3): it waits on a name nobody holds, tells a release, a close,
 * an expiry and a break apart, and outlives an unreachable etcd, resuming where it was or naming a compacted gap.
 * Before, it exited 3 on an idle name, ended when etcd blipped, and called every lease that was gone "expired".
 */
class DiscoWatchTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static final Duration WAIT = Duration.ofSeconds(15);

    private static final CliHarness CLI = new CliHarness(ETCD);

    @Test
    void waitsForAnIdleNameThenTellsAReleaseACloseAnExpiryAndABreakApart() throws Exception {
        String name = CliHarness.name("watch-endings");
        CliHarness.Watching watch = CLI.new Watching("watch", name);
        try {
            await().atMost(WAIT).until(() -> watch.printed("watching " + name + ": nobody holds or waits for it now"));

            EtcdSession a = CLI.session("a");
            EtcdSession b = CLI.session("b");
            LockService la = a.newLock(name);
            la.lock(WAIT);
            await().atMost(WAIT).until(() -> watch.printed("is claimed as a lock"));
            await().atMost(WAIT).until(() -> watch.printed("acquired", name + "/" + CliHarness.hex(a)));
            CompletableFuture<Grant> next = b.newLock(name).lockAsync();
            await().atMost(WAIT).until(() -> watch.printed("queued", name + "/" + CliHarness.hex(b)));

            la.unlock(); // a release: the key is deleted, the lease lives
            next.get(10, SECONDS);
            await().atMost(WAIT).until(() -> watch.printed("released", name + "/" + CliHarness.hex(a)));
            await().atMost(WAIT).until(() -> watch.printed("acquired", name + "/" + CliHarness.hex(b)));

            b.close(); // a close: the lease is revoked with the key on it, long before it could run out
            await().atMost(WAIT).until(() -> watch.printed("closed", name + "/" + CliHarness.hex(b)));
            a.close();

            // an expiry: a holder whose lease (2 s) nobody renews
            long lease = CLI.client().getLeaseClient().grant(2).get(5, SECONDS).getID();
            String expiring = name + "/" + Long.toHexString(lease);
            CLI.client()
                    .getKVClient()
                    .put(
                            bytes(expiring),
                            bytes(ClaimMetadata.ofCurrentThread("frozen").toJson()),
                            PutOption.builder().withLeaseId(lease).build())
                    .get(5, SECONDS);
            await().atMost(WAIT).until(() -> watch.printed("acquired", expiring));
            await().atMost(WAIT).until(() -> watch.printed("expired", expiring));

            // a break: disco break deletes the key (its lease lives) and leaves its record
            try (EtcdSession c = CLI.session("c")) {
                c.newLock(name).lock(WAIT);
                String held = name + "/" + CliHarness.hex(c);
                await().atMost(WAIT).until(() -> watch.printed("acquired", held));
                assertEquals(0, CLI.disco("", "break", name, "--yes").code());
                await().atMost(WAIT).until(() -> watch.printed("broken", held));
            }
            String text = watch.text();
            for (String wrong : List.of(
                    "expired  holder        " + name + "/" + CliHarness.hex(b),
                    "released holder        " + name + "/" + CliHarness.hex(b),
                    "broken   holder        " + name + "/" + CliHarness.hex(a))) {
                assertTrue(!text.contains(wrong), "not '" + wrong + "':\n" + text);
            }
        } finally {
            watch.close();
        }
        assertEquals(0, watch.code(), "watch ends with 0 when interrupted");
    }

    /**
     * Through a proxy: first it stops forwarding (the connections stay open), then it is closed (the connections are
     * cut) while etcd compacts the revisions the watch has not seen. The watch says once per outage that etcd is
     * unreachable, keeps going, says when it answers again and shows what changed meanwhile, and names the gap
     * etcd compacted away.
     */
    @Test
    void outlivesAnUnreachableEtcdAndNamesACompactedGap() throws Exception {
        try (EtcdCluster own = EtcdCluster.start(1);
                CliHarness direct = CliHarness.on(own)) {
            InetSocketAddress target = address(own.endpoint(0));
            TcpProxy proxy = new TcpProxy(target);
            int port = proxy.port();
            String name = CliHarness.name("watch-outage");
            String key = null;
            try (EtcdSession a = direct.session("a");
                    CliHarness.Watching watch = direct
                    .new Watching(
                            "watch",
                            name,
                            "--primitive",
                            "lock",
                            "--endpoints=http://127.0.0.1:" + port,
                            "--command-timeout=1s")) {
                key = name + "/" + CliHarness.hex(a);
                String held = key;
                await().atMost(WAIT).until(() -> watch.printed("watching lock " + name));
                LockService la = a.newLock(name);
                la.lock(WAIT);
                await().atMost(WAIT).until(() -> watch.printed("acquired", held));

                proxy.blackhole(true);
                await().atMost(WAIT).until(() -> watch.printed("no answer from etcd", "still watching"));
                la.unlock(); // while the watch cannot see it
                proxy.blackhole(false);
                await().atMost(WAIT).until(() -> watch.printed("etcd answers again"));
                await().atMost(WAIT).until(() -> watch.printed("released", held));

                la.lock(WAIT);
                await().atMost(WAIT).until(() -> count(watch, "acquired", held) == 2);
                proxy.close(); // the connections are cut: the watch must be made again, from the last revision it saw
                await().atMost(WAIT).until(() -> count(watch, "still watching") == 2);
                la.unlock();
                long now = direct.client()
                        .getKVClient()
                        .put(bytes("/test/cli/filler"), bytes("x"))
                        .get(5, SECONDS)
                        .getHeader()
                        .getRevision();
                direct.client().getKVClient().compact(now).get(5, SECONDS);
                proxy = new TcpProxy(new InetSocketAddress(target.getAddress(), port), target, dialer -> null);

                await().atMost(WAIT).until(() -> count(watch, "etcd answers again") == 2);
                await().atMost(WAIT).until(() -> count(watch, "released", held) == 2);
                await().atMost(WAIT)
                        .until(() -> watch.printed("missed what happened between revisions", "compacted them away"));

                la.lock(WAIT); // and it still follows the name
                await().atMost(WAIT).until(() -> count(watch, "acquired", held) == 3);
                la.unlock();
            } finally {
                proxy.close();
            }
        }
    }

    private static long count(CliHarness.Watching watch, String... parts) {
        return watch.text()
                .lines()
                .filter(l -> List.of(parts).stream().allMatch(l::contains))
                .count();
    }

    private static InetSocketAddress address(String endpoint) {
        URI uri = URI.create(endpoint);
        return new InetSocketAddress(uri.getHost(), uri.getPort());
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
