package io.disco.testservers;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/** Waiting for a {@link ZooKeeperEnsemble}'s members to serve: they offer no event, so their modes are polled. */
final class ZooKeeperQuorum {

    private ZooKeeperQuorum() {}

    /**
     * Polls the modes of {@code members} until {@code waitFor} serve (and, with {@code oneLeader}, the members have
     * one leader), bounded by {@code timeout}; the caller holds the ensemble's lock.
     */
    static void awaitServing(
            List<ZooKeeperMember> members, List<ZooKeeperMember> waitFor, boolean oneLeader, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> modes = members.stream().map(ZooKeeperMember::mode).toList();
            boolean serving =
                    waitFor.stream().allMatch(m -> Set.of("leader", "follower").contains(modes.get(m.id - 1)));
            if (serving
                    && (!oneLeader || modes.stream().filter("leader"::equals).count() == 1)) {
                return;
            }
            for (ZooKeeperMember m : waitFor) {
                if (!m.process.isRunning()) {
                    throw new IllegalStateException(
                            "ZooKeeper member zk" + m.id + " exited while starting; the members said " + modes
                                    + "; its log tail:\n" + m.process.logTail());
                }
            }
            if (System.nanoTime() - deadline > 0) {
                ZooKeeperMember first = waitFor.stream()
                        .filter(m -> !modes.get(m.id - 1).equals("leader")
                                && !modes.get(m.id - 1).equals("follower"))
                        .findFirst()
                        .orElse(waitFor.get(0));
                throw new IllegalStateException("the ZooKeeper ensemble did not serve with one leader within "
                        + timeout.toMillis() + " ms; the members said " + modes + "; the log tail of zk" + first.id
                        + ":\n"
                        + first.process.logTail());
            }
            pause();
        }
    }

    /** Between two polls of the members' modes: 50 ms. */
    static void pause() {
        try {
            Thread.sleep(50); // polling processes that offer no event to wait for
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the ZooKeeper ensemble", e);
        }
    }
}
