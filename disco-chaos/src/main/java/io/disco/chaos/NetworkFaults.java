package io.disco.chaos;

import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import io.disco.testservers.TcpProxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * The nemesis' faults that need the members in network namespaces of their own ({@link MemberNetwork})
 * and, for the peer-link kinds, their peer ports behind proxies ({@link PeerLinks}); both reached through
 * the run's {@link Members} (etcd's with {@code EtcdCluster.startNetworked}); each for 1.5–3 × TTL:
 * <ul>
 *   <li>{@code isolate-leader}: the leader's packets from the other members are dropped and theirs from
 *       it, while the owners' proxies stay connected to it (on Redis the primary with its sentinel, the cut lasting
 *       until the two other sentinels have promoted a replica and 0.5–1.5 s beyond: the old primary keeps serving
 *       the clients attached to it, its grants' {@code WAIT} finding no replica);</li>
 *   <li>{@code split-cluster}: one member cut off from the two others, both ways; half the owners
 *       reach only that minority member (their proxies to the others blackholed; on Redis also to the sentinels
 *       of the others, {@link Members#memberOf}), the other half only the majority (on Redis the cut of a primary
 *       lasts past the promotion, as above);</li>
 *   <li>{@code one-way-partition}: one member drops the packets of another, not the reverse;</li>
 *   <li>{@code partition-during-freeze}: an owner frozen (recorded as a {@code freeze-owner} fault of
 *       its own, which the checkers know) and, in the middle of its freeze, a member cut off both ways;</li>
 *   <li>{@code slow-peer-link}: every peer connection of one member (the leader every other time),
 *       both ways, delayed 20–200 ms (its amount), jitter up to half that, on the proxies in front of the
 *       members' peer ports ({@link PeerLinks});</li>
 *   <li>{@code lossy-peer-link}: the same member's peer connections lose 1–10 % of their chunks (its
 *       amount), each a 200–600 ms stall.</li>
 * </ul>
 * Each is healed in a {@code finally}.
 */
final class NetworkFaults {

    private NetworkFaults() {}

    /**
     * Deals one fault of {@code kind} for {@code hold} nanoseconds, then heals it.
     *
     * @param amount where a link's delay or loss is put, for the fault's record
     * @return the fault's target, for its record
     */
    static String deal(Nemesis n, String kind, long hold, long[] amount) throws Exception {
        return switch (kind) {
            case "isolate-leader" -> {
                int m = n.member(true);
                boolean promoted = partition(n, m, hold, true);
                yield "m" + m + (m == n.leader ? "-leader" : "") + (promoted ? "" : "-no-failover");
            }
            case "split-cluster" -> {
                int m = n.random.nextInt(n.members.size());
                List<Integer> order = new ArrayList<>(
                        IntStream.range(0, n.owners.size()).boxed().toList());
                Collections.shuffle(order, n.random);
                List<Integer> minorityOwners = order.subList(0, n.owners.size() / 2);
                boolean promoted;
                try {
                    for (int o = 0; o < n.owners.size(); o++) {
                        List<TcpProxy> mine = n.proxies.get(o);
                        for (int i = 0; i < mine.size(); i++) {
                            mine.get(i).blackhole(minorityOwners.contains(o) != (n.members.memberOf(i) == m));
                        }
                    }
                    promoted = partition(n, m, hold, true);
                } finally {
                    n.proxies.forEach(list -> list.forEach(p -> p.blackhole(false)));
                }
                yield "m" + m + " with "
                        + minorityOwners.stream()
                                .map(o -> "o" + o)
                                .toList()
                                .toString()
                                .replace(" ", "")
                        + (promoted ? "" : "-no-failover");
            }
            case "one-way-partition" -> {
                MemberNetwork net = n.members.network().orElseThrow();
                int to = n.member(false);
                int from = (to + 1 + n.random.nextInt(n.members.size() - 1)) % n.members.size();
                try {
                    net.cut(to, List.of(from));
                    TimeUnit.NANOSECONDS.sleep(hold);
                } finally {
                    net.heal(to);
                }
                yield "m" + to + "-drops-m" + from;
            }
            case "partition-during-freeze" -> {
                int who = n.holder();
                int m = n.random.nextInt(n.members.size());
                long frozenAt = System.nanoTime();
                n.owners.get(who).signal("STOP");
                try {
                    TimeUnit.NANOSECONDS.sleep(hold / 4);
                    partition(n, m, hold / 2, false);
                    TimeUnit.NANOSECONDS.sleep(hold / 4);
                } finally {
                    n.owners.get(who).signal("CONT");
                }
                n.faults.add(new Observations.Fault("freeze-owner", "o" + who, frozenAt, System.nanoTime(), 0));
                yield "o" + who + "+m" + m;
            }
            case "slow-peer-link", "lossy-peer-link" -> {
                PeerLinks peers = n.members.peerLinks().orElseThrow();
                int m = n.member();
                TcpProxy.Link link = kind.equals("slow-peer-link")
                        ? Nemesis.slow(n.random, amount)
                        : Nemesis.lossy(n.random, amount);
                try {
                    peers.degrade(m, link);
                    TimeUnit.NANOSECONDS.sleep(hold);
                } finally {
                    peers.degrade(m, TcpProxy.Link.CLEAN);
                }
                yield "m" + m + (m == n.leader ? "-leader" : "");
            }
            default -> throw new IllegalArgumentException("not a network fault: " + kind);
        };
    }

    /**
     * Cuts member {@code m} off from the other members, both ways, for {@code nanos}; then heals. With
     * {@code awaitFailover}, when {@code m} is the primary of a Sentinel-managed Redis ({@link RedisMembers}), the cut
     * also lasts until the other sentinels have promoted a replica (at most {@value RedisFaults#FAILOVER_WAIT_SECONDS}
     * s) and 0.5–1.5 s beyond: the old primary serves the clients still attached to it beside the new one.
     *
     * @return false when a failover was awaited and did not come, else true
     */
    private static boolean partition(Nemesis n, int m, long nanos, boolean awaitFailover) throws InterruptedException {
        MemberNetwork net = n.members.network().orElseThrow();
        List<Integer> others =
                IntStream.range(0, n.members.size()).filter(i -> i != m).boxed().toList();
        boolean promoted = true;
        boolean primary = awaitFailover && n.members instanceof RedisMembers && m == n.members.leader();
        long start = System.nanoTime();
        try {
            net.cut(m, others);
            for (int o : others) {
                net.cut(o, List.of(m));
            }
            if (primary) {
                RedisMembers redis = (RedisMembers) n.members;
                promoted =
                        redis.awaitPromotionOtherThan(m, TimeUnit.SECONDS.toNanos(RedisFaults.FAILOVER_WAIT_SECONDS));
                long beyond = TimeUnit.MILLISECONDS.toNanos(500 + n.random.nextInt(1000));
                TimeUnit.NANOSECONDS.sleep(Math.max(beyond, nanos - (System.nanoTime() - start)));
            } else {
                TimeUnit.NANOSECONDS.sleep(nanos);
            }
        } finally {
            net.healAll();
        }
        return promoted;
    }
}
