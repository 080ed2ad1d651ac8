package io.disco.provider.etcd;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A release whose answer was lost (the only member frozen with SIGSTOP while it was sent) fails after the
 * request timeout and gives the grant up at once ({@code held()} is empty: its token must not be used); the
 * delete is sent again in the background, and once the member resumes and applies it, the release is
 * confirmed without being called again, and the next acquisition claims anew with a newer token (issue
 * 44: before, the grant stayed held and the next acquisition of the service was handed it, token and all).
 */
class LostReleaseAnswerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /** A long TTL: the freeze must not cost the lease (the member counts leases from the last renewal it saw). */
    private static final EtcdOptions OPTIONS = Etcd.options(30, 2);

    private static EtcdCluster etcd;
    private static Client client;

    @BeforeAll
    static void start() {
        etcd = EtcdCluster.start(1);
        // No client-side deadline: a request sent to the frozen member stays open, and is applied once it resumes.
        client = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    private static void releaseWhileFrozen(String prefix, Executable release, Supplier<Optional<?>> held)
            throws Exception {
        assertTrue(held.get().isPresent());
        etcd.pause(0);
        try {
            long start = System.nanoTime();
            DiscoException e = assertThrows(DiscoException.class, release);
            System.out.println("release with the member frozen failed after " + (System.nanoTime() - start) / 1_000_000
                    + " ms: " + e);
            assertTrue(held.get().isEmpty(), "a release without an answer gives the grant up");
            assertTrue(e.getMessage().contains("given up"), e.getMessage());
        } finally {
            etcd.resume(0);
        }
        await().atMost(WAIT).until(() -> Etcd.keysUnder(client, prefix).isEmpty()); // the delete was applied
        long applied = System.nanoTime();
        await().atMost(WAIT).until(() -> held.get().isEmpty());
        System.out.println(
                "held() empty " + (System.nanoTime() - applied) / 1_000_000 + " ms after the key was seen gone");
    }

    @Test
    void aLockReleaseWhoseAnswerWasLostCountsOnceItsDeleteIsSeen() throws Exception {
        String prefix = Etcd.uniquePrefix("lost-release-answer");
        try (EtcdSession session = EtcdSession.open(client, OPTIONS);
                LockService lock = session.newLock(prefix)) {
            FencingToken first = lock.lock(WAIT).token();
            releaseWhileFrozen(prefix, lock::unlock, lock::held);
            assertTrue(lock.err().isEmpty(), "our own release is no loss");
            FencingToken second = lock.lock(WAIT).token();
            assertTrue(second.isNewerThan(first), "a new acquisition, not the old grant");
            lock.unlock();
        }
    }

    @Test
    void aResignationWhoseAnswerWasLostCountsOnceItsDeleteIsSeen() throws Exception {
        String prefix = Etcd.uniquePrefix("lost-resign-answer");
        try (EtcdSession session = EtcdSession.open(client, OPTIONS);
                ElectionService election = session.newElection(prefix)) {
            Leadership first = election.campaign("a", WAIT);
            releaseWhileFrozen(prefix, election::resign, election::held);
            assertTrue(election.err().isEmpty(), "our own resignation is no loss");
            Leadership second = election.campaign("b", WAIT);
            assertTrue(second.token().isNewerThan(first.token()), "a new term, not the old one");
            election.resign();
        }
    }
}
