package io.disco.chaos;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.disco.testing.EtcdCluster;
import io.disco.testing.MemberNetwork;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.options.GetOption;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** A chaos run's etcd: a 3-member {@link EtcdCluster} on loopback, or each member in a network namespace. */
final class EtcdMembers implements Members {

    private final EtcdCluster etcd;

    EtcdMembers(boolean networked) {
        this.etcd = networked ? EtcdCluster.startNetworked(3) : EtcdCluster.start(3);
    }

    @Override
    public String backend() {
        return "etcd";
    }

    @Override
    public int size() {
        return etcd.size();
    }

    @Override
    public List<InetSocketAddress> clientAddresses() {
        return etcd.endpoints().stream().map(URI::create).map(u -> new InetSocketAddress(u.getHost(), u.getPort())).toList();
    }

    @Override
    public String ownerEndpoints(List<Integer> ports) {
        return String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList());
    }

    @Override
    public List<String> resourceArguments() {
        return List.of("--etcd", String.join(",", etcd.endpoints()));
    }

    @Override
    public void kill(int member) {
        etcd.kill(member);
    }

    @Override
    public void startMember(int member) {
        etcd.startMember(member);
    }

    @Override
    public void pause(int member) {
        etcd.pause(member);
    }

    @Override
    public void resume(int member) {
        etcd.resume(member);
    }

    @Override
    public Optional<MemberNetwork> network() {
        return etcd.network();
    }

    /**
     * Waits until the cluster has recovered from the faults: every member reports healthy and they all
     * name one leader, which reports itself as leader.
     */
    @Override
    public Optional<String> awaitRecovered(long timeoutNanos) throws InterruptedException {
        etcd.network().ifPresent(MemberNetwork::healAll);
        long deadline = System.nanoTime() + timeoutNanos;
        String seen = "nothing";
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            while (true) {
                java.util.Set<Long> leaders = new java.util.HashSet<>();
                int selfLeaders = 0;
                int answered = 0;
                for (int i = 0; i < etcd.size(); i++) {
                    try {
                        StatusResponse s = c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(2, TimeUnit.SECONDS);
                        answered++;
                        leaders.add(s.getLeader());
                        selfLeaders += s.getLeader() == s.getHeader().getMemberId() ? 1 : 0;
                    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
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

    @Override
    public int leader() {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            for (int i = 0; i < etcd.size(); i++) {
                StatusResponse s = c.getMaintenanceClient().statusMember(etcd.endpoint(i)).get(5, TimeUnit.SECONDS);
                if (s.getLeader() == s.getHeader().getMemberId()) {
                    return i;
                }
            }
        } catch (Exception e) {
            // no member answered in time: pick one at random
        }
        return -1;
    }

    @Override
    public void compact() throws Exception {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            long rev = c.getKVClient().get(ByteSequence.from("x", UTF_8)).get(10, TimeUnit.SECONDS).getHeader().getRevision();
            try {
                c.getKVClient().compact(rev).get(10, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!String.valueOf(e.getCause().getMessage()).contains("compacted")) {
                    throw e;
                } // nothing written since the last compaction: already compacted
            }
        }
    }

    /** Holder keys under the name: an owner whose revoke found no member leaves keys until its lease runs out. */
    @Override
    public long keysLeft(String name, long ttlNanos) throws Exception {
        try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build()) {
            long deadline = System.nanoTime() + 2 * ttlNanos + TimeUnit.SECONDS.toNanos(2);
            while (true) {
                long left = c.getKVClient().get(ByteSequence.from(name + "/", UTF_8),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build()).get(10, TimeUnit.SECONDS).getCount();
                if (left == 0 || System.nanoTime() > deadline) {
                    return left;
                }
                Thread.sleep(100); // polling etcd for the leases that run out
            }
        }
    }

    @Override
    public void close() {
        etcd.close();
    }
}
