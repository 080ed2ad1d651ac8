package io.disco.contract;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.client.TestableBackend;
import io.disco.core.DiscoSession;
import io.disco.core.SessionListener;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The {@link SessionListener} contract, the same on every backend: each primitive's acquisitions, releases,
 * failed acquisitions and losses are told with the primitive's word ({@code lock}, {@code rwlock},
 * {@code semaphore}, {@code election}), the grant's key and token; the session's loss comes after its services'
 * losses, and only its close (when its owner closes it) after it; a close is the last event; renewals are told with
 * the time left. What the
 * Micrometer binding counts rests on this.
 */
public abstract class SessionListenerContract extends ContractSupport {

    /**
     * The backend under test with {@code listener} registered on the options of every owner it opens (etcd:
     * {@code EtcdOptions.builder().listener(...)}; ZooKeeper: {@code ZooKeeperOptions.builder().listener(...)}).
     *
     * @param listener the listener
     * @return a backend on the same servers as {@link #backend()}; the contract closes it
     */
    protected abstract TestableBackend listening(SessionListener listener);

    /** What a listener heard, as "event primitive" lines per session (lease id in hex). */
    private static final class Heard implements SessionListener {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final List<FencingToken> tokens = new CopyOnWriteArrayList<>();
        final List<String> keys = new CopyOnWriteArrayList<>();
        final List<Duration> remaining = new CopyOnWriteArrayList<>();

        private void add(DiscoSession s, String line) {
            lines.add(Long.toHexString(s.leaseId()) + " " + line);
        }

        @Override
        public void renewed(DiscoSession s, Duration left) {
            remaining.add(left);
        }

        @Override
        public void lost(DiscoSession s, DiscoException cause) {
            add(s, "lost");
        }

        @Override
        public void closed(DiscoSession s) {
            add(s, "closed");
        }

        @Override
        public void acquired(
                DiscoSession s, String primitive, String name, String key, FencingToken token, Duration waited) {
            tokens.add(token);
            keys.add(key);
            add(s, "acquired " + primitive);
        }

        @Override
        public void released(DiscoSession s, String primitive, String name, Duration held) {
            add(s, "released " + primitive);
        }

        @Override
        public void acquisitionFailed(DiscoSession s, String primitive, String name, Throwable cause, Duration waited) {
            add(s, "acquisitionFailed " + primitive);
        }

        @Override
        public void grantLost(DiscoSession s, String primitive, String name, Throwable cause, Duration held) {
            add(s, "grantLost " + primitive);
        }

        List<String> of(DiscoBackend.Owner owner) {
            String prefix = owner.id() + " ";
            return lines.stream()
                    .filter(l -> l.startsWith(prefix))
                    .map(l -> l.substring(prefix.length()))
                    .toList();
        }
    }

    private Heard heard;
    private TestableBackend listening;

    private DiscoBackend.Owner listened(int ttlSeconds) {
        if (heard == null) {
            heard = new Heard();
            listening = track(listening(heard));
        }
        return track(listening.open(Duration.ofSeconds(ttlSeconds)));
    }

    private void awaitHeard(DiscoBackend.Owner owner, List<String> expected) {
        await().atMost(SOON).untilAsserted(() -> assertEquals(expected, heard.of(owner)));
    }

    @Test
    void everyPrimitiveTellsItsAcquisitionsAndReleasesWithItsWordKeyAndToken() throws Exception {
        DiscoBackend.Owner owner = listened(10);
        LockService lock = owner.newLock(uniqueName("listened-lock"));
        Grant g = lock.lock();
        lock.unlock();
        RWLockService rw = owner.newRWLock(uniqueName("listened-rwlock"));
        RWGrant r = rw.rLock();
        rw.rUnlock();
        SemaphoreService semaphore = owner.newSemaphore(uniqueName("listened-semaphore"), 2);
        Permit p = semaphore.acquire();
        semaphore.release();
        ElectionService election = owner.newElection(uniqueName("listened-election"));
        Leadership l = election.campaign("me");
        election.resign();
        owner.close();
        awaitHeard(
                owner,
                List.of(
                        "acquired lock",
                        "released lock",
                        "acquired rwlock",
                        "released rwlock",
                        "acquired semaphore",
                        "released semaphore",
                        "acquired election",
                        "released election",
                        "closed"));
        assertEquals(List.of(g.token(), r.token(), p.token(), l.token()), heard.tokens);
        assertEquals(List.of(g.key(), r.key(), p.key(), l.key()), heard.keys);
    }

    @Test
    void aTimedOutAcquisitionIsToldAsFailedAndATryThatFindsItTakenIsNot() throws Exception {
        String name = uniqueName("listened-timeout");
        LockService holder = owner(10).newLock(name);
        holder.lock();
        DiscoBackend.Owner owner = listened(10);
        LockService waiter = owner.newLock(name);
        assertThrows(TimeoutException.class, () -> waiter.lock(Duration.ofMillis(200)));
        assertTrue(waiter.tryLock().isEmpty());
        holder.unlock();
        waiter.lock(SOON);
        owner.close();
        awaitHeard(owner, List.of("acquisitionFailed lock", "acquired lock", "released lock", "closed"));
    }

    @Test
    void aLostOwnerTellsEachHeldGrantsLossThenItsOwnThenOnlyItsClose() throws Exception {
        DiscoBackend.Owner owner = listened(10);
        LockService lock = owner.newLock(uniqueName("listened-lost"));
        lock.lock();
        listening.endOwner(owner);
        lock.done().toCompletableFuture().get(SOON.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        awaitHeard(owner, List.of("acquired lock", "grantLost lock", "lost"));
        assertThrows(LockLostException.class, lock::unlock); // reports the loss, tells nothing
        owner.close();
        awaitHeard(owner, List.of("acquired lock", "grantLost lock", "lost", "closed"));
    }

    @Test
    void renewalsAreToldWithTheTimeLeft() {
        DiscoBackend.Owner owner = listened(2);
        owner.newLock(uniqueName("listened-renewals"));
        await().atMost(SOON).until(() -> heard.remaining.size() >= 2);
        assertTrue(
                heard.remaining.stream().allMatch(d -> !d.isNegative() && d.compareTo(Duration.ofSeconds(2)) <= 0),
                "time left within the time to live: " + heard.remaining);
        assertTrue(heard.remaining.stream().anyMatch(d -> !d.isZero()), "some time left: " + heard.remaining);
    }
}
