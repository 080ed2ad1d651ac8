package io.disco.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The nemesis' faults of a Sentinel-managed Redis ({@link RedisMembers}: a primary, two replicas, three sentinels
 * with {@code down-after-milliseconds 1000} and {@code failover-timeout 3000}):
 * <ul>
 *   <li>{@value #KILL_PRIMARY}: kill -9 the primary, wait until a majority of the sentinels names a promoted replica
 *       that says {@code role:master} (at most {@value #FAILOVER_WAIT_SECONDS} s), then start the old primary again
 *       0.5–1.5 s later (from its append-only file: it comes back as a primary with a new replication id until the
 *       sentinels make it a replica of the new one);</li>
 *   <li>{@value #FREEZE_PRIMARY}: SIGSTOP the primary past the failover, as above, then 0.5–1.5 s more, then SIGCONT
 *       it: a stale primary whose clients are still connected (their commands sent during the freeze, queued in its
 *       socket buffers, run when it wakes), until the sentinels demote it;</li>
 *   <li>{@value #LAG_REPLICA}: {@code DEBUG SLEEP} a replica for 1.5–3 × TTL (its amount, in ms), both replicas half the
 *       time (drawn from the seed): a grant's {@code WAIT 1} then gets no acknowledgement and the grant fails closed.</li>
 * </ul>
 * The target is {@code m<i>-leader} (the primary) or the replicas' {@code m<i>}.
 */
final class RedisFaults {

    static final String KILL_PRIMARY = "kill-primary-failover";
    static final String FREEZE_PRIMARY = "freeze-primary-failover";
    static final String LAG_REPLICA = "lag-replica";
    static final List<String> KINDS = List.of(KILL_PRIMARY, FREEZE_PRIMARY, LAG_REPLICA);

    /** How long a failover is waited for before the old primary is started or resumed anyway. */
    static final int FAILOVER_WAIT_SECONDS = 20;

    private RedisFaults() {}

    /**
     * Deals one fault of {@code kind}, then heals it.
     *
     * @param hold 1.5–3 × TTL, drawn by the nemesis
     * @param amount where a lag's length (ms) is put, for the fault's record
     * @return the fault's target
     */
    static String deal(Nemesis n, String kind, long hold, long[] amount) throws Exception {
        RedisMembers redis = (RedisMembers) n.members;
        return switch (kind) {
            case KILL_PRIMARY, FREEZE_PRIMARY -> {
                int m = n.member(true);
                boolean kill = kind.equals(KILL_PRIMARY);
                long start = System.nanoTime();
                if (kill) {
                    redis.kill(m);
                } else {
                    redis.pause(m);
                }
                boolean promoted;
                try {
                    promoted = redis.awaitPromotionOtherThan(m, TimeUnit.SECONDS.toNanos(FAILOVER_WAIT_SECONDS));
                    Thread.sleep(500 + n.random.nextInt(1000));
                } finally {
                    if (kill) {
                        redis.startMember(m);
                    } else {
                        redis.resume(m);
                    }
                }
                amount[0] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                yield "m" + m + (m == n.leader ? "-leader" : "") + (promoted ? "" : "-no-failover");
            }
            case LAG_REPLICA -> {
                int primary = n.member(true);
                List<Integer> replicas = new ArrayList<>();
                for (int i = 0; i < redis.size(); i++) {
                    if (i != primary) {
                        replicas.add(i);
                    }
                }
                boolean both = n.random.nextBoolean();
                List<Integer> lagged = both ? replicas : List.of(replicas.get(n.random.nextInt(replicas.size())));
                amount[0] = TimeUnit.NANOSECONDS.toMillis(hold);
                List<Thread> sleepers = new ArrayList<>();
                for (int r : lagged) {
                    Thread t = new Thread(() -> redis.sleep(r, amount[0]), "chaos-lag-m" + r);
                    t.start();
                    sleepers.add(t);
                }
                for (Thread t : sleepers) {
                    t.join();
                }
                yield lagged.stream().map(r -> "m" + r).toList().toString().replace(" ", "");
            }
            default -> throw new IllegalArgumentException("not a Redis fault: " + kind);
        };
    }
}
