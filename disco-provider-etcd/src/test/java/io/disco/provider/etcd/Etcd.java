package io.disco.provider.etcd;

import io.disco.testservers.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** Test helpers around a real etcd. */
final class Etcd {

    private Etcd() {}

    static Client client(EtcdCluster etcd) {
        return Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(10)))
                .build();
    }

    /**
     * Session options with a generous request timeout: tests of ordering and tokens must not fail on a
     * slow answer from a busy 2-core machine. Tests of deadlines set their own.
     */
    static EtcdOptions ttl(int seconds) {
        return options(seconds, 10);
    }

    /** Session options with this TTL and request timeout, for a test of deadlines. */
    static EtcdOptions options(int ttlSeconds, int requestTimeoutSeconds) {
        return EtcdOptions.builder()
                .ttl(Duration.ofSeconds(ttlSeconds))
                .requestTimeout(Duration.ofSeconds(requestTimeoutSeconds))
                .build();
    }

    /** A prefix no other test uses. */
    static String uniquePrefix(String name) {
        return "/test/" + name + "/" + UUID.randomUUID();
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** The keys under {@code prefix + "/"}, read linearizably. */
    static List<String> keysUnder(Client client, String prefix) throws Exception {
        return client
                .getKVClient()
                .get(bytes(prefix + "/"), GetOption.builder().isPrefix(true).build())
                .get(5, TimeUnit.SECONDS)
                .getKvs()
                .stream()
                .map(KeyValue::getKey)
                .map(k -> k.toString(StandardCharsets.UTF_8))
                .sorted()
                .collect(Collectors.toList());
    }

    static long revision(Client client) throws Exception {
        return client.getKVClient()
                .get(bytes("/"))
                .get(5, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    /** The index of a member that is the raft leader ({@code leader}) or a follower (not). */
    static int aMember(EtcdCluster etcd, boolean leader) throws Exception {
        // A leader may still be being elected (a previous test killed or froze one): ask until one is found, up to 15
        // s.
        int[] found = {-1};
        org.awaitility.Awaitility.await("a " + (leader ? "leader" : "follower") + " in " + etcd.describe())
                .atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> (found[0] = member(etcd, leader)) >= 0);
        return found[0];
    }

    /** @return a member that reports a leader and is (or is not) it, or -1 */
    private static int member(EtcdCluster etcd, boolean leader) throws Exception {
        for (int i = 0; i < etcd.size(); i++) {
            try (Client c = Client.builder().endpoints(etcd.endpoint(i)).build()) {
                StatusResponse status =
                        c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(10, TimeUnit.SECONDS);
                if (status.getLeader() != 0
                        && (status.getLeader() == status.getHeader().getMemberId()) == leader) {
                    return i;
                }
            }
        }
        return -1;
    }
}
