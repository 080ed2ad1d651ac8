package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.testservers.MemberNetwork;
import io.disco.testservers.PeerLinks;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The nemesis deals only the kinds its members can be dealt ({@link Members#deals}): on members without a
 * network, peer proxies or a history (ZooKeeper's on loopback) the network, peer-link and compaction kinds are
 * left out of the deck; none left is an error. The freeze of every member ({@link Nemesis#FREEZE_ALL}) needs only
 * members that can be paused, a request timeout shorter than the TTL, and is as long as it says. No cluster runs:
 * the members here only say what they lack, and record what they are asked.
 */
class NemesisKindsTest {

    /** Members with no network, no peer links and no history, as ZooKeeper's ensemble on loopback. */
    private static final Members BARE = new Bare();

    /** {@link #BARE}'s kind; {@link #pause} and {@link #resume} do nothing unless overridden. */
    private static class Bare implements Members {
        public String backend() {
            return "zookeeper";
        }

        public int size() {
            return 3;
        }

        public List<InetSocketAddress> clientAddresses() {
            return List.of();
        }

        public String ownerEndpoints(List<Integer> ports) {
            return "";
        }

        public List<String> resourceArguments() {
            return List.of();
        }

        public void kill(int member) {}

        public void startMember(int member) {}

        public void pause(int member) {}

        public void resume(int member) {}

        public int leader() {
            return -1;
        }

        public Optional<String> awaitRecovered(long timeoutNanos) {
            return Optional.empty();
        }

        public Optional<MemberNetwork> network() {
            return Optional.empty();
        }

        public Optional<PeerLinks> peerLinks() {
            return Optional.empty();
        }

        public boolean hasHistory() {
            return false;
        }

        public void compact() {
            throw new UnsupportedOperationException();
        }

        public long keysLeft(String name, long ttlNanos) {
            return 0;
        }

        public void close() {}
    }

    private static Nemesis nemesis(List<String> kinds) {
        return new Nemesis(BARE, List.of(), List.of(), List.of(), List.of(), 1, 2, 1, kinds);
    }

    @Test
    void kindsTheMembersCannotBeDealtAreLeftOut() {
        assertEquals(
                List.of("freeze-owner", "slow-link"),
                nemesis(List.of("freeze-owner", "compact", "isolate-leader", "slow-peer-link", "slow-link"))
                        .kinds());
    }

    @Test
    void everyMemberFrozenIsDealtWhereverMembersCanBePaused() {
        assertEquals(
                List.of(Nemesis.FREEZE_ALL),
                nemesis(List.of(Nemesis.FREEZE_ALL, "compact")).kinds());
        assertTrue(List.of(Nemesis.KINDS).contains(Nemesis.FREEZE_ALL));
        assertTrue(Nemesis.PROCESS_KINDS.contains(Nemesis.FREEZE_ALL), "dealt by default, with or without a network");
        assertTrue(Chaos.faultKinds(false).contains(Nemesis.FREEZE_ALL));
        assertTrue(Chaos.zookeeperKinds(false).contains(Nemesis.FREEZE_ALL), "ZooKeeper's members are frozen too");
    }

    @Test
    void theFreezeOfEveryMemberNeedsARequestTimeoutShorterThanTheTtl() {
        long s = 1_000_000_000L;
        for (long requestTimeout : new long[] {2 * s, 3 * s}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> new Nemesis(
                            BARE,
                            List.of(),
                            List.of(),
                            List.of(),
                            List.of(),
                            1,
                            2 * s,
                            requestTimeout,
                            List.of(Nemesis.FREEZE_ALL)));
            assertTrue(e.getMessage().contains("request timeout"), e.getMessage());
        }
        // without the kind, no such constraint
        assertEquals(
                List.of("freeze-owner"),
                new Nemesis(BARE, List.of(), List.of(), List.of(), List.of(), 1, 2 * s, 2 * s, List.of("freeze-owner"))
                        .kinds());
        // the suite's own options leave room for it
        Chaos.Options o = new Chaos.Options(new ClientLockWorkload(), 1, 1, 1, false, List.of(Nemesis.FREEZE_ALL));
        assertTrue(o.requestTimeoutMillis() < 1000 * o.ttlSeconds(), o.toString());
        assertThrows(
                IllegalArgumentException.class,
                () -> new Chaos.Options(new ClientLockWorkload(), 1, 1, 1, 2, 2000, false, 20, List.of(), "etcd"));
    }

    @Test
    void theFreezeIsLongerThanTheRequestTimeoutAndShorterThanTheTtl() {
        long ttl = 2_000_000_000L;
        long requestTimeout = 1_000_000_000L;
        Nemesis n = new Nemesis(
                BARE, List.of(), List.of(), List.of(), List.of(), 42, ttl, requestTimeout, List.of(Nemesis.FREEZE_ALL));
        for (int i = 0; i < 1000; i++) {
            long length = n.freezeAllNanos();
            assertTrue(
                    length >= 1_150_000_000L && length <= 1_400_000_000L,
                    length + " ns: between 1.15 and 1.4 s, leaving"
                            + " 0.6 s under the TTL for stopping and resuming the members one after another");
        }
    }

    @Test
    void everyMemberIsFrozenTogetherForTheLengthAskedThenResumed() throws Exception {
        List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
        long[] lastPause = {0};
        long[] firstResume = {Long.MAX_VALUE};
        Members recording = new Bare() {
            @Override
            public void pause(int member) {
                calls.add("pause " + member);
                lastPause[0] = System.nanoTime();
            }

            @Override
            public void resume(int member) {
                firstResume[0] = Math.min(firstResume[0], System.nanoTime());
                calls.add("resume " + member);
            }
        };
        long ttl = 400_000_000L;
        long requestTimeout = 200_000_000L;
        Nemesis n = new Nemesis(
                recording,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                7,
                ttl,
                requestTimeout,
                List.of(Nemesis.FREEZE_ALL));
        long length = n.freezeAllNanos();
        long[] at = n.freezeAll(length);
        assertEquals(List.of("pause 0", "pause 1", "pause 2", "resume 0", "resume 1", "resume 2"), calls);
        assertTrue(firstResume[0] - lastPause[0] >= length, "every member frozen together for the length asked");
        assertTrue(
                at[2] - at[1] >= length && at[2] - at[1] > requestTimeout, "the window it reports: " + (at[2] - at[1]));
        assertTrue(at[0] <= at[1] && at[1] <= at[2] && at[2] <= at[3], java.util.Arrays.toString(at));
    }

    @Test
    void noKindLeftIsAnError() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> nemesis(List.of("compact", "split-cluster")));
        assertTrue(e.getMessage().contains("zookeeper"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> nemesis(List.of("no-such-kind")));
    }
}
