package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code etcdctl elect} (etcd's own Go {@code concurrency.Election}) and this library take part in the
 * same election. etcdctl 3.4 prints the leader's key and then its value, one per line, when it wins
 * ({@code elect <name> <value>}) and on every change it observes ({@code elect -l <name>}).
 */
class ElectionInteropTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private static String line(Etcdctl ctl, String what) throws InterruptedException {
        String l = ctl.nextLine(10_000);
        assertNotNull(l, "etcdctl printed no " + what + " within 10 s");
        return l;
    }

    @Test
    void etcdctlLeaderIsSeenByLeaderAndObserveAndJavaSucceedsIt() throws Exception {
        String name = uniquePrefix("elect-ctl-first");
        BlockingQueue<Leadership> seen = new LinkedBlockingQueue<>();
        try (Etcdctl ctl = Etcdctl.start(ETCD.cluster().endpoint(0), "elect", name, "ctl-value");
                ElectionService java = EtcdProvider.newElection(ETCD.client(), name, ttl(10))) {
            String key = line(ctl, "leader key"); // printed once etcdctl is elected
            assertEquals("ctl-value", line(ctl, "leader value"));
            assertTrue(key.startsWith(name + "/"), key);

            Leadership ctlLeader =
                    java.leader().orElseThrow(() -> new AssertionError("leader() must see etcdctl's leader"));
            assertEquals(key, ctlLeader.key());
            assertEquals("ctl-value", ctlLeader.value());

            try (Observation ignored = java.observe(seen::add)) {
                assertEquals(ctlLeader, seen.poll(5, SECONDS), "observe() must see etcdctl's leader");

                CompletableFuture<Leadership> mine = java.campaignAsync("java-value");
                await().atMost(Duration.ofSeconds(5))
                        .until(() -> keysUnder(ETCD.client(), name).size() == 2);
                assertThrows(
                        TimeoutException.class,
                        () -> mine.get(300, MILLISECONDS),
                        "Java must not lead while etcdctl does");

                ctl.interrupt(); // Ctrl-C: etcdctl resigns (revokes its session)
                Leadership lj = mine.get(10, SECONDS);
                assertTrue(lj.token().isNewerThan(ctlLeader.token()));
                assertEquals(lj, seen.poll(5, SECONDS), "observe() must see the succession");
            }
        }
    }

    @Test
    void javaLeaderIsSeenByEtcdctlObserverAndEtcdctlSucceedsIt() throws Exception {
        String name = uniquePrefix("elect-java-first");
        String endpoint = ETCD.cluster().endpoint(0);
        try (ElectionService java = EtcdProvider.newElection(ETCD.client(), name, ttl(10))) {
            Leadership lj = java.campaign("java-value");
            try (Etcdctl observer = Etcdctl.start(endpoint, "elect", "-l", name)) {
                assertEquals(lj.key(), line(observer, "leader key"));
                assertEquals("java-value", line(observer, "leader value"));

                java.proclaim("java-value-2");
                assertEquals(lj.key(), line(observer, "leader key after proclaim"));
                assertEquals("java-value-2", line(observer, "proclaimed value"));

                try (Etcdctl candidate = Etcdctl.start(endpoint, "elect", name, "ctl-value")) {
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> keysUnder(ETCD.client(), name).size() == 2);
                    assertNull(candidate.nextLine(500), "etcdctl must not be elected while Java leads");

                    java.resign();
                    String ctlKey = line(candidate, "leader key");
                    assertEquals("ctl-value", line(candidate, "leader value"));
                    assertEquals(ctlKey, line(observer, "new leader key"));
                    assertEquals("ctl-value", line(observer, "new leader value"));
                    assertEquals(ctlKey, java.leader().orElseThrow().key());
                }
            }
        }
    }
}
