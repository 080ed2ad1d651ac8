package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.testing.MemberNetwork;
import io.disco.testing.PeerLinks;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The nemesis deals only the kinds its members can be dealt ({@link Members#deals}): on members without a
 * network, peer proxies or a history (ZooKeeper's on loopback) the network, peer-link and compaction kinds are
 * left out of the deck; none left is an error. No cluster runs: the members here only say what they lack.
 */
class NemesisKindsTest {

    /** Members with no network, no peer links and no history, as ZooKeeper's ensemble on loopback. */
    private static final Members BARE = new Members() {
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

        public void kill(int member) {
        }

        public void startMember(int member) {
        }

        public void pause(int member) {
        }

        public void resume(int member) {
        }

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

        public void close() {
        }
    };

    private static Nemesis nemesis(List<String> kinds) {
        return new Nemesis(BARE, List.of(), List.of(), List.of(), List.of(), 1, 1, kinds);
    }

    @Test
    void kindsTheMembersCannotBeDealtAreLeftOut() {
        assertEquals(List.of("freeze-owner", "slow-link"),
                nemesis(List.of("freeze-owner", "compact", "isolate-leader", "slow-peer-link", "slow-link")).kinds());
    }

    @Test
    void noKindLeftIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> nemesis(List.of("compact", "split-cluster")));
        assertTrue(e.getMessage().contains("zookeeper"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> nemesis(List.of("no-such-kind")));
    }
}
