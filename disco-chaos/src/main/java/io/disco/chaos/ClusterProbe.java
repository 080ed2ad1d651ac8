package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testservers.EtcdCluster;
import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What the nemesis asks an etcd cluster ({@link EtcdMembers}): who leads, whether it recovered; and the compaction it deals. */
final class ClusterProbe {

    private ClusterProbe() {}

    /**
     * Heals the member network and the peer links, then waits until the cluster has recovered from the
     * faults: every member reports healthy and they all name one leader, which reports itself as leader.
     *
     * @return empty when recovered within {@code timeoutNanos}, else what was last seen
     */
    static Optional<String> awaitRecovered(EtcdCluster etcd, long timeoutNanos) throws InterruptedException {
        etcd.network().ifPresent(MemberNetwork::healAll);
        etcd.peerLinks().ifPresent(PeerLinks::healAll);
        long deadline = System.nanoTime() + timeoutNanos;
        String seen = "nothing";
        try (Client c = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            while (true) {
                Set<Long> leaders = new HashSet<>();
                int selfLeaders = 0;
                int answered = 0;
                for (int i = 0; i < etcd.size(); i++) {
                    try {
                        StatusResponse s = c.getMaintenanceClient()
                                .statusMember(etcd.endpoint(i))
                                .get(2, TimeUnit.SECONDS);
                        answered++;
                        leaders.add(s.getLeader());
                        selfLeaders += s.getLeader() == s.getHeader().getMemberId() ? 1 : 0;
                    } catch (ExecutionException | TimeoutException e) {
                        // this member does not answer yet
                    }
                }
                seen = answered + " of " + etcd.size() + " members answered, leaders named " + leaders
                        + ", members that lead " + selfLeaders;
                if (answered == etcd.size() && leaders.size() == 1 && !leaders.contains(0L) && selfLeaders == 1) {
                    return Optional.empty();
                }
                if (System.nanoTime() > deadline) {
                    return Optional.of(seen);
                }
                Thread.sleep(200); // polling the members' status until they agree
            }
        }
    }

    /** @return the index of the member that leads now, or -1 when none answers */
    static int leader(EtcdCluster etcd) {
        try (Client c = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            for (int i = 0; i < etcd.size(); i++) {
                StatusResponse s =
                        c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(5, TimeUnit.SECONDS);
                if (s.getLeader() == s.getHeader().getMemberId()) {
                    return i;
                }
            }
        } catch (Exception e) {
            // no member answered in time: pick one at random
        }
        return -1;
    }

    /** Compacts etcd to its current revision. */
    static void compact(EtcdCluster etcd) throws Exception {
        try (Client c = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build()) {
            long rev = c.getKVClient()
                    .get(ByteSequence.from("x", UTF_8))
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            try {
                c.getKVClient().compact(rev).get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!String.valueOf(e.getCause().getMessage()).contains("compacted")) {
                    throw e;
                } // nothing written since the last compaction: already compacted
            }
        }
    }
}
