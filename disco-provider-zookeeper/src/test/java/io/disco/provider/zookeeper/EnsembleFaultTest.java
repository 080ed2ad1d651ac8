package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.testservers.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lock on a ZooKeeper ensemble of three member processes ({@link ZooKeeperEnsemble}, one for the class)
 * under the faults of the etcd fault tests: a frozen member, a killed leader, an expired session (the
 * CURATOR-604 zombie) and a partitioned owner. In each, the owner that is cut off learns it from {@code done()}
 * before the server could expire its session (so before anybody else is granted), its successor's token is
 * larger, and a guard rejects the zombie's token.
 */
class EnsembleFaultTest {

    /** The owners' session timeout: the loss is signalled within two thirds of it. */
    private static final int SESSION_MS = 3_000;

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static ZooKeeperEnsemble ensemble;
    private static CuratorFramework admin;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeAll
    static void startEnsemble() {
        ensemble = ZooKeeperEnsemble.start(3);
        admin = ZkContractBackend.client(ensemble.connectString(), 30_000);
    }

    @AfterAll
    static void stopEnsemble() {
        if (admin != null) {
            admin.close();
        }
        if (ensemble != null) {
            ensemble.close();
        }
    }

    @AfterEach
    void closeOwners() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** An owner: its own Curator client (its own ZooKeeper session) on {@code connectString}, and a session on it. */
    private ZooKeeperSession owner(String connectString, int sessionMs) {
        CuratorFramework client = ZkContractBackend.client(connectString, sessionMs);
        closing.add(client);
        ZooKeeperSession session = ZooKeeperSession.open(client, ZkContractBackend.options());
        closing.add(session);
        return session;
    }

    private static String name(String what) {
        return "/faults/" + what + "-" + UUID.randomUUID();
    }

    /** What a successor saw: its grant, and when it came. */
    private record Granted(Grant grant, long atNanos) {}

    /** Starts {@code lock.lock(WAIT)} on another thread, noting when it is granted. */
    private static CompletableFuture<Granted> lockLater(LockService lock) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                Grant g = lock.lock(WAIT);
                return new Granted(g, System.nanoTime());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Waits until {@code n} nodes lie under {@code name}: the claimants are queued. */
    private static void awaitQueued(String name, int n) {
        Awaitility.await()
                .atMost(WAIT)
                .until(() -> admin.getChildren().forPath(name).size() == n);
    }

    /**
     * Queues {@code successorLock} behind {@code zombieLock}, which holds {@code zombie}, cuts the zombie off with
     * {@code cut}, and checks that it was fenced ({@link #assertFenced}).
     *
     * @return what the successor saw
     */
    private static Granted cutOff(
            LockService zombieLock, Grant zombie, LockService successorLock, String name, Runnable cut)
            throws Exception {
        CompletableFuture<Long> zombieDone = doneAt(zombieLock);
        CompletableFuture<Granted> successor = lockLater(successorLock);
        awaitQueued(name, 2);
        long cutAt = System.nanoTime();
        cut.run();
        long doneAt = zombieDone.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        Granted next = successor.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertFenced(zombie, cutAt, doneAt, next);
        return next;
    }

    /** @return when {@code done} completed, on the monotonic clock, waiting at most {@code within} */
    private static CompletableFuture<Long> doneAt(LockService lock) {
        return lock.done().toCompletableFuture().thenApply(v -> System.nanoTime());
    }

    /**
     * The cut-off owner's {@code done()} came within the session timeout of the cut and before the successor's
     * grant; the successor's token is larger; the guard rejects the zombie once it saw the successor.
     */
    private static void assertFenced(Grant zombie, long cutAt, long doneAt, Granted successor) {
        assertTrue(
                doneAt - cutAt < TimeUnit.MILLISECONDS.toNanos(SESSION_MS),
                "done() fired " + TimeUnit.NANOSECONDS.toMillis(doneAt - cutAt)
                        + " ms after the cut, not within the session timeout of " + SESSION_MS + " ms");
        assertTrue(
                doneAt < successor.atNanos(),
                "the successor was granted " + TimeUnit.NANOSECONDS.toMillis(doneAt - successor.atNanos())
                        + " ms before the zombie's done() fired");
        assertTrue(
                successor.grant().token().isNewerThan(zombie.token()),
                "the successor's token " + successor.grant().token() + " must be larger than the zombie's "
                        + zombie.token());
        Guard guard = Guard.create();
        guard.check(zombie.token());
        guard.check(successor.grant().token());
        assertThrows(
                TokenStaleException.class,
                () -> guard.check(zombie.token()),
                "the guard must reject the zombie's token");
    }

    @Test
    void anOwnerWhoseMemberIsFrozenLearnsItBeforeItsSuccessorIsGranted() throws Exception {
        int leader = ensemble.leader();
        int frozen = (leader + 1) % ensemble.size();
        int other = (leader + 2) % ensemble.size();
        String name = name("frozen-member");
        LockService zombieLock =
                owner(ensemble.connectString(frozen), SESSION_MS).newLock(name);
        Grant zombie = zombieLock.lock(WAIT);
        LockService successorLock = owner(ensemble.connectString(other), 10_000).newLock(name);
        try {
            cutOff(zombieLock, zombie, successorLock, name, () -> ensemble.freeze(frozen));
            assertTrue(zombieLock.err().isPresent(), "the zombie's lock reports its loss");
        } finally {
            ensemble.thaw(frozen);
        }
        ensemble.awaitHealthy(WAIT);
    }

    @Test
    void locksKeepWorkingAcrossAKilledLeaderAndTokensGrowAcrossTheEpochChange() throws Exception {
        String name = name("killed-leader");
        LockService before = owner(ensemble.connectString(), 10_000).newLock(name);
        Grant first = before.lock(WAIT);
        before.unlock();
        int leader = ensemble.leader();
        ensemble.kill(leader);
        try {
            int next = ensemble.leader();
            assertNotEquals(leader, next, "a new leader");
            LockService holder = owner(ensemble.connectString(), 10_000).newLock(name);
            LockService waiter = owner(ensemble.connectString(), 10_000).newLock(name);
            Grant second = holder.lock(WAIT);
            CompletableFuture<Granted> third = lockLater(waiter);
            awaitQueued(name, 2);
            holder.unlock();
            Grant handedOver = third.get(WAIT.toSeconds(), TimeUnit.SECONDS).grant();
            assertTrue(
                    second.token().value() >>> 32 > first.token().value() >>> 32,
                    "the epoch (the token's high 32 bits) grew: "
                            + Long.toHexString(first.token().value()) + " then "
                            + Long.toHexString(second.token().value()));
            assertTrue(second.token().isNewerThan(first.token()), first.token() + " then " + second.token());
            assertTrue(handedOver.token().isNewerThan(second.token()), second.token() + " then " + handedOver.token());
            waiter.unlock();
        } finally {
            ensemble.restart(leader);
        }
        ensemble.awaitHealthy(WAIT);
    }

    /**
     * CURATOR-604: Curator's mutex could be granted through a node its protected-mode retry found after the
     * session changed, a node of the previous session that the server deletes later, when somebody else is then
     * granted too. Here the owner's session really expires (its link cut until the server ends it): its
     * {@code done()} fires first, its client comes back on a new session, and its services stay lost; and a
     * node of another session with the lock's name, as a lagging member still shows an expired session's node,
     * is refused by the ephemeral-owner check the worker applies to every node it creates or finds again, while
     * the queue behind it is granted only once it is gone.
     */
    @Test
    void anExpiredSessionsNodeIsNeverGrantedThroughAndItsOwnerIsFencedOff() throws Exception {
        String name = name("expired-session");
        int leader = ensemble.leader();
        try (FreezableProxy link = new FreezableProxy(port(ensemble.connectString(leader)))) {
            CuratorFramework zombieClient = ZkContractBackend.client(link.connectString(), SESSION_MS);
            closing.add(zombieClient);
            ZooKeeperSession zombieSession = ZooKeeperSession.open(zombieClient, ZkContractBackend.options());
            closing.add(zombieSession);
            long expiredSession = zombieSession.sessionId();
            LockService zombieLock = zombieSession.newLock(name);
            Grant zombie = zombieLock.lock(WAIT);
            LockService successorLock = owner(ensemble.connectString(), 10_000).newLock(name);
            Granted next =
                    cutOff(zombieLock, zombie, successorLock, name, link::freeze); // the server expired the session
            assertThrows(LockLostException.class, zombieLock::unlock, "the zombie's release reports the loss");
            assertThrows(
                    IllegalStateException.class,
                    () -> zombieSession.newLock(name + "-again"),
                    "a lost session makes no new service");
            assertNotEquals(expiredSession, ownerOf(next.grant().key()));
            successorLock.unlock();
        }

        // The zombie node: a node under the lock's name whose ephemeral owner is not the session that finds it.
        ZooKeeperSession current = owner(ensemble.connectString(), 10_000);
        String zombieNode = admin.create()
                .withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(ZKPaths.makePath(name, NodeKind.LOCK.marker()));
        Stat found = OwnNode.confirm(current.client(), zombieNode, new Stat()); // found again: no stat from the create
        assertNotNull(found);
        String refusal = OwnNode.foreignOwner(zombieNode, found, current.sessionId());
        assertNotNull(
                refusal,
                "a node of session 0x" + Long.toHexString(found.getEphemeralOwner()) + " must not be used by session 0x"
                        + Long.toHexString(current.sessionId()));
        LockService queued = current.newLock(name);
        CompletableFuture<Granted> behind = lockLater(queued);
        awaitQueued(name, 2);
        Awaitility.await()
                .during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(2))
                .until(() -> !behind.isDone());
        admin.delete().forPath(zombieNode); // the server's deletion of the expired session's node, late
        Granted g = behind.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(current.sessionId(), ownerOf(g.grant().key()), "granted through its own node only");
        queued.unlock();
    }

    @Test
    void aPartitionedOwnerLearnsItBeforeItsSuccessorIsGranted() throws Exception {
        String name = name("partitioned-owner");
        int member = ensemble.leader();
        try (FreezableProxy link = new FreezableProxy(port(ensemble.connectString(member)))) {
            LockService zombieLock = owner(link.connectString(), SESSION_MS).newLock(name);
            Grant zombie = zombieLock.lock(WAIT);
            LockService successorLock = owner(ensemble.connectString(), 10_000).newLock(name);
            cutOff(zombieLock, zombie, successorLock, name, link::freeze);
            successorLock.unlock();
        }
    }

    private static long ownerOf(String node) throws Exception {
        Stat s = admin.checkExists().forPath(node);
        return s == null ? 0 : s.getEphemeralOwner();
    }

    private static int port(String connectString) {
        return Integer.parseInt(connectString.substring(connectString.lastIndexOf(':') + 1));
    }
}
