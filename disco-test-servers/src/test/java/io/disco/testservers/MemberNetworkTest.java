package io.disco.testservers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A cluster with a member per network namespace: a member cut off from the others can no longer
 * commit (its client's put times out) while the majority can, it catches up once healed, and closing
 * the cluster removes every namespace and the bridge.
 */
class MemberNetworkTest {

    @Test
    void aCutMemberCannotCommitUntilHealedAndCloseRemovesTheNetwork() throws Exception {
        List<String> names;
        try (EtcdCluster etcd = EtcdCluster.startNetworked(3)) {
            MemberNetwork net = etcd.network().orElseThrow();
            names = List.of(net.namespace(0), net.namespace(1), net.namespace(2));
            assertTrue(
                    etcd.endpoint(1).equals("http://" + net.address(1) + ":2379"),
                    etcd.endpoints().toString());
            try (Client minority = Kv.client(etcd.endpoint(0));
                    Client majority = Kv.client(List.of(etcd.endpoint(1), etcd.endpoint(2)))) {
                Kv.put(minority, "net/before", "1", Duration.ofSeconds(5));
                net.cut(0, List.of(1, 2));
                net.cut(1, List.of(0));
                net.cut(2, List.of(0));
                assertTrue(net.rules(0).contains(net.address(1)), net.rules(0));
                try {
                    Kv.putEventually(majority, "net/during", "2");
                    assertThrows(
                            TimeoutException.class, () -> Kv.put(minority, "net/minority", "3", Duration.ofSeconds(2)));
                } finally {
                    net.healAll();
                }
                assertFalse(net.rules(0).contains(net.address(1)), net.rules(0));
                assertEquals("2", Kv.getEventually(minority, "net/during"), "the minority caught up after healing");
            }
        }
        String left = new String(
                new ProcessBuilder("ip", "netns", "list")
                        .start()
                        .getInputStream()
                        .readAllBytes(),
                StandardCharsets.UTF_8);
        names.forEach(n -> assertFalse(left.contains(n), n + " is left: " + left));
    }

    @Test
    void theSweepRemovesTheNamespacesOfAJvmThatIsGone() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        String name = "dn" + gone.pid() + "zm0";
        assertEquals(0, new ProcessBuilder("ip", "netns", "add", name).start().waitFor());
        assertTrue(MemberNetwork.sweepLeftovers() >= 1);
        String left = new String(
                new ProcessBuilder("ip", "netns", "list")
                        .start()
                        .getInputStream()
                        .readAllBytes(),
                StandardCharsets.UTF_8);
        assertFalse(left.contains(name), left);
    }

    @Test
    void networksCreatedAtOnceGetSubnetsOfTheirOwn() throws Exception {
        List<CompletableFuture<MemberNetwork>> made = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            made.add(CompletableFuture.supplyAsync(() -> MemberNetwork.create(1)));
        }
        List<MemberNetwork> networks = new ArrayList<>();
        try {
            for (CompletableFuture<MemberNetwork> f : made) {
                networks.add(f.get(60, TimeUnit.SECONDS));
            }
            List<String> hosts =
                    networks.stream().map(MemberNetwork::hostAddress).toList();
            assertEquals(3, new HashSet<>(hosts).size(), "each network its own subnet: " + hosts);
        } finally {
            for (CompletableFuture<MemberNetwork> f : made) {
                f.thenAccept(MemberNetwork::close);
            }
        }
    }
}
