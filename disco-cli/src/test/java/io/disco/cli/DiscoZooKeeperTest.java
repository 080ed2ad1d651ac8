package io.disco.cli;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.LeadershipLostException;
import io.disco.fencing.FencingToken;
import io.disco.fencing.TokenStaleException;
import io.disco.fencing.guard.Guard;
import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.provider.zookeeper.ZooKeeperNodes;
import io.disco.provider.zookeeper.ZooKeeperSession;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.ThreadPerTask;
import io.disco.testservers.ZooKeeperExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code holders}, {@code list} and {@code break} with {@code --backend zookeeper} against a real ZooKeeper (the
 * in-process server of disco-test-servers), on nodes made by this library and by Curator's recipes on the same paths
 * ({@code InterProcessMutex}, {@code InterProcessReadWriteLock}, {@code InterProcessSemaphoreV2}, {@code LeaderLatch}):
 * the holders and waiters in queue order with their sessions and tokens, and a break after which the next holder,
 * whoever made it, holds with a newer token while a holder of this library learns that it lost.
 */
class DiscoZooKeeperTest {

    @RegisterExtension
    static final ZooKeeperExtension ZK = ZooKeeperExtension.sharedServer();

    private static final Duration WAIT = Duration.ofSeconds(15);

    private static final CliHarness CLI = CliHarness.on(ZK);

    private final ZkClaims claims = new ZkClaims(ZK);

    @AfterEach
    void closeClaims() {
        claims.close();
    }

    private static CliHarness.Run disco(String stdin, String... args) {
        return CLI.disco(stdin, args);
    }

    /** A blocking acquisition of one of Curator's recipes, on a thread of its own. */
    private interface Acquire<T> {
        T acquire() throws Exception;
    }

    private static <T> CompletableFuture<T> async(Acquire<T> acquire) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return acquire.acquire();
                    } catch (Exception e) {
                        throw new CompletionException(e);
                    }
                },
                ThreadPerTask.DAEMON);
    }

    /** The table row of {@code key} in {@code holders}' output. */
    private static String row(CliHarness.Run r, String key) {
        return r.out()
                .lines()
                .filter(l -> l.contains(" " + key + " "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no row of " + key + " in:\n" + r.out()));
    }

    /** The rows of the table, in order (after the title and the header). */
    private static List<String> rows(CliHarness.Run r) {
        return r.out().lines().skip(2).filter(l -> !l.isBlank()).toList();
    }

    /** A row's column: 0 role, 1 position, 2 key, 3 lease, 4 TTL, 5 token, 6 name, then the holder's metadata. */
    private static String column(String row, int i) {
        return row.trim().split("\\s+")[i];
    }

    private static long number(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "'" + regex + "' in:\n" + text);
        return Long.parseLong(m.group(1));
    }

    private static long czxid(ZkClaims claims, String node) throws Exception {
        return claims.stat(node).getCzxid();
    }

    @Test
    void aLockOfThisLibraryAndOfInterProcessMutexIsListedInQueueOrderAndBrokenHolderByHolder() throws Exception {
        String name = ZkClaims.name("lock");
        ZooKeeperSession a = claims.session();
        LockService la = a.newLock(name);
        Grant zombie = la.lock(WAIT);
        CuratorFramework cc = claims.client();
        InterProcessMutex curator = new InterProcessMutex(cc, name);
        CompletableFuture<Boolean> curatorHolds = async(() -> {
            curator.acquire();
            return true;
        });
        String curatorNode = claims.awaitQueue(name, 2, WAIT).get(1);
        ZooKeeperSession b = claims.session();
        LockService lb = b.newLock(name);
        CompletableFuture<Grant> next = lb.lockAsync();
        List<String> queue = claims.awaitQueue(name, 3, WAIT);
        assertEquals(List.of(zombie.key(), curatorNode), queue.subList(0, 2));

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(
                holders.out().startsWith("lock " + name + ": 1 holding, 2 waiting (kind found from its nodes"),
                holders.out());
        List<String> rows = rows(holders);
        assertEquals(3, rows.size(), holders.out());
        for (int i = 0; i < 3; i++) {
            assertTrue(rows.get(i).contains(" " + queue.get(i) + " "), "queue order, row " + i + ": " + rows.get(i));
        }
        String holder = rows.get(0);
        assertTrue(holder.startsWith("holder") && holder.contains(" " + Long.toHexString(a.sessionId()) + " "), holder);
        assertEquals(Long.toString(zombie.token().value()), column(holder, 5), "the holder's token: " + holder);
        assertEquals("?", column(holder, 4), "the TTL column is '?' on ZooKeeper: " + holder);
        assertEquals(name, column(holder, 6), holder);
        assertTrue(holder.contains("pid=" + ProcessHandle.current().pid()) && holder.contains("claimed-at="), holder);
        assertTrue(rows.get(1).startsWith("waiter") && rows.get(1).contains(" " + ZkClaims.hex(cc) + " "), rows.get(1));
        assertTrue(rows.get(1).contains("value="), "Curator's node data is not this library's: " + rows.get(1));
        assertTrue(rows.get(2).startsWith("waiter") && rows.get(2).contains("pid="), rows.get(2));

        CliHarness.Run list = disco("", "list", name);
        assertEquals(0, list.code(), list.err());
        assertTrue(
                list.out()
                        .lines()
                        .anyMatch(l -> l.matches(Pattern.quote(name) + "\\s+lock\\s+1\\s+2\\s+"
                                + zombie.token().value() + "\\s+\\?")),
                list.out());

        CliHarness.Run declined = disco("n\n", "break", name);
        assertEquals(ExitCode.NOT_BROKEN, declined.code(), declined.err());
        assertTrue(la.err().isEmpty() && claims.stat(zombie.key()) != null, "nothing was deleted");

        CliHarness.Run broken = disco("y\n", "break", name);
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("deletes: " + zombie.key()), broken.out());
        long zxid = number(broken.out(), "broken at zxid (\\d+)");
        assertTrue(zxid > zombie.token().value(), "the break's zxid follows the token");
        assertTrue(
                broken.out()
                        .contains("the broken holder's token was "
                                + zombie.token().value()),
                broken.out());
        long mark = number(broken.out(), "raise the guard's mark to (\\d+)");
        assertEquals(zombie.token().value() + 1, mark, "a lock's next token is a czxid above the broken one");
        la.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertInstanceOf(LockLostException.class, la.err().orElseThrow(), "the broken holder learns it lost");
        assertNotNull(claims.stat(ZooKeeperNodes.breakRecord(zombie.key())), "the break left its record");

        assertTrue(curatorHolds.get(WAIT.toSeconds(), SECONDS), "InterProcessMutex, next in the queue, holds");
        long curatorToken = czxid(claims, curatorNode);
        CliHarness.Run now = disco("", "holders", name);
        assertEquals(0, now.code(), now.err());
        assertTrue(row(now, curatorNode).startsWith("holder"), now.out());
        assertEquals(Long.toString(curatorToken), column(row(now, curatorNode), 5), now.out());
        Guard guard = Guard.withInitialToken(mark);
        guard.check(FencingToken.of(curatorToken));
        assertThrows(TokenStaleException.class, () -> guard.check(zombie.token()));

        // the Curator holder broken in turn: this library's waiter holds, with a newer token
        CliHarness.Run second = disco("", "break", name, "--yes");
        assertEquals(0, second.code(), second.err());
        assertTrue(second.out().contains("deletes: " + curatorNode), second.out());
        Grant successor = next.get(WAIT.toSeconds(), SECONDS);
        assertTrue(successor.token().value() > curatorToken, successor.token() + " after " + curatorToken);
        guard.check(successor.token());
        lb.unlock();
        assertEquals(ExitCode.NOTHING_HELD, disco("", "break", name, "--yes").code());
    }

    @Test
    void aReadPhaseBeforeACuratorWriterIsBrokenWholeAndTheWriterAfterIt() throws Exception {
        String name = ZkClaims.name("rwlock");
        RWLockService ra = claims.session().newRWLock(name);
        RWLockService rb = claims.session().newRWLock(name);
        RWGrant first = ra.rLock(WAIT);
        RWGrant second = rb.rLock(WAIT);
        assertEquals(first.token(), second.token(), "one phase, one token");
        InterProcessReadWriteLock curator = new InterProcessReadWriteLock(claims.client(), name);
        CompletableFuture<Boolean> writing = async(() -> {
            curator.writeLock().acquire();
            return true;
        });
        String writer = claims.awaitQueue(name, 3, WAIT).get(2);
        RWLockService rc = claims.session().newRWLock(name);
        CompletableFuture<RWGrant> reading = rc.rLockAsync();
        List<String> queue = claims.awaitQueue(name, 4, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("rwlock " + name + ": 2 holding, 2 waiting"), holders.out());
        List<String> rows = rows(holders);
        assertEquals(4, rows.size(), holders.out());
        for (int i = 0; i < 4; i++) {
            assertTrue(rows.get(i).contains(" " + queue.get(i) + " "), "queue order, row " + i + ": " + rows.get(i));
        }
        for (int i = 0; i < 2; i++) {
            assertTrue(rows.get(i).startsWith("holder:read"), rows.get(i));
            assertEquals(Long.toString(first.token().value()), column(rows.get(i), 5), "one phase, one token");
        }
        assertTrue(rows.get(2).startsWith("waiter:write") && rows.get(2).contains(writer), rows.get(2));
        assertTrue(rows.get(3).startsWith("waiter:read"), rows.get(3));

        assertEquals(
                ExitCode.USAGE,
                disco("", "break", name, "--yes", "--holder", first.key()).code());
        CliHarness.Run broken = disco("", "break", name, "--yes");
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("the read phase (2 readers, one shared token)"), broken.out());
        assertTrue(
                broken.out().contains(ZooKeeperNodes.phaseMarker(name) + " (the read phase's marker)"), broken.out());
        ra.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        rb.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertTrue(ra.err().isPresent() && rb.err().isPresent(), "both readers learn they lost");
        assertTrue(writing.get(WAIT.toSeconds(), SECONDS), "the Curator writer, next, holds");

        CliHarness.Run writerHolds = disco("", "holders", name);
        assertTrue(row(writerHolds, writer).startsWith("holder:write"), writerHolds.out());
        assertEquals("?", column(row(writerHolds, writer), 5), "a Curator writer has no token: " + writerHolds.out());
        CliHarness.Run writerBroken = disco("", "break", name, "--yes");
        assertEquals(0, writerBroken.code(), writerBroken.err());
        assertTrue(writerBroken.out().contains("no token in ZooKeeper's state"), writerBroken.out());
        long zxid = number(writerBroken.out(), "broken at zxid (\\d+)");
        RWGrant next = reading.get(WAIT.toSeconds(), SECONDS);
        assertTrue(next.token().value() > zxid, "a new phase, above the break: " + next.token() + " > " + zxid);
        assertTrue(next.token().isNewerThan(first.token()));
        rc.rUnlock();
    }

    @Test
    void aSemaphorePermitIsBrokenWithItsSlotAndACuratorLeaseHoldsNext() throws Exception {
        String name = ZkClaims.name("semaphore");
        String leases = ZooKeeperNodes.semaphoreLeases(name);
        SemaphoreService sa = claims.session().newSemaphore(name, 1);
        Permit zombie = sa.acquire(WAIT);
        InterProcessSemaphoreV2 curator = new InterProcessSemaphoreV2(claims.client(), name, 1);
        CompletableFuture<Lease> curatorLease = async(curator::acquire);
        String curatorNode = claims.awaitQueue(leases, 2, WAIT).get(1);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("semaphore " + name + ": 1 holding, 1 waiting"), holders.out());
        assertTrue(rows(holders).get(0).contains(" " + zombie.key() + " "), holders.out());
        assertEquals(Long.toString(zombie.token().value()), column(rows(holders).get(0), 5), "the slot's token");
        assertTrue(rows(holders).get(1).startsWith("waiter")
                && rows(holders).get(1).contains(curatorNode));

        CliHarness.Run broken = disco("", "break", name, "--yes");
        assertEquals(0, broken.code(), broken.err());
        String slot = ZooKeeperNodes.semaphoreSlot(name, zombie.slot());
        assertTrue(broken.out().contains(slot + " (the permit's slot: freed)"), broken.out());
        sa.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertTrue(sa.err().isPresent(), "the broken permit's holder learns it lost");
        assertEquals(0, claims.admin().getData().forPath(slot).length, "its slot is free");
        assertNotNull(curatorLease.get(WAIT.toSeconds(), SECONDS), "the Curator lease, next, holds");

        SemaphoreService sb = claims.session().newSemaphore(name, 1);
        CompletableFuture<Permit> next = sb.acquireAsync();
        claims.awaitQueue(leases, 2, WAIT);
        CliHarness.Run curatorHolds = disco("", "holders", name);
        assertTrue(row(curatorHolds, curatorNode).startsWith("holder"), curatorHolds.out());
        assertEquals("?", column(row(curatorHolds, curatorNode), 5), "a Curator lease has no token");
        assertEquals(0, disco("", "break", name, "--yes").code());
        Permit permit = next.get(WAIT.toSeconds(), SECONDS);
        assertTrue(permit.token().isNewerThan(zombie.token()), permit.token() + " after " + zombie.token());
        sb.release();
    }

    @Test
    void anElectionOfThisLibraryAndOfLeaderLatchHandsOverOnEachBreak() throws Exception {
        String name = ZkClaims.name("election");
        ElectionService ea = claims.session().newElection(name);
        Leadership zombie = ea.campaign("leader-a", WAIT);
        LeaderLatch latch = claims.closing(new LeaderLatch(claims.client(), name, "latch-b"));
        latch.start();
        String latchNode = claims.awaitQueue(name, 2, WAIT).get(1);
        ElectionService ec = claims.session().newElection(name);
        CompletableFuture<Leadership> third = ec.campaignAsync("candidate-c");
        List<String> queue = claims.awaitQueue(name, 3, WAIT);

        CliHarness.Run holders = disco("", "holders", name);
        assertEquals(0, holders.code(), holders.err());
        assertTrue(holders.out().startsWith("election " + name + ": 1 holding, 2 waiting"), holders.out());
        List<String> rows = rows(holders);
        for (int i = 0; i < 3; i++) {
            assertTrue(rows.get(i).contains(" " + queue.get(i) + " "), "queue order, row " + i + ": " + rows.get(i));
        }
        assertTrue(rows.get(0).startsWith("leader") && rows.get(0).contains("value=leader-a"), rows.get(0));
        assertEquals(Long.toString(zombie.token().value()), column(rows.get(0), 5), rows.get(0));
        assertTrue(rows.get(1).startsWith("candidate") && rows.get(1).contains("value=latch-b"), rows.get(1));
        assertTrue(rows.get(2).startsWith("candidate") && rows.get(2).contains("value=candidate-c"), rows.get(2));

        CliHarness.Run broken = disco("", "break", name, "--yes");
        assertEquals(0, broken.code(), broken.err());
        assertTrue(broken.out().contains("breaking its leader"), broken.out());
        assertTrue(broken.out().contains("the next leader's token (its node's czxid) will exceed it"), broken.out());
        ea.done().toCompletableFuture().get(WAIT.toSeconds(), SECONDS);
        assertInstanceOf(LeadershipLostException.class, ea.err().orElseThrow(), "the broken leader learns it lost");
        assertTrue(latch.await(WAIT.toSeconds(), SECONDS), "LeaderLatch, next, leads");
        long latchToken = czxid(claims, latchNode);
        assertTrue(latchToken > zombie.token().value());
        CliHarness.Run latchLeads = disco("", "holders", name);
        assertTrue(row(latchLeads, latchNode).startsWith("leader"), latchLeads.out());
        assertEquals(Long.toString(latchToken), column(row(latchLeads, latchNode), 5), latchLeads.out());

        assertEquals(0, disco("", "break", name, "--yes").code());
        Leadership next = third.get(WAIT.toSeconds(), SECONDS);
        assertTrue(next.token().value() > latchToken, next.token() + " after " + latchToken);
        ec.resign();
    }
}
