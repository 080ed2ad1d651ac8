package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.DiscoException;
import io.disco.fencing.Fenced;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.ThreadPerTask;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 44 on the services themselves: a release whose answer does not come within the request timeout gives the
 * grant up. The owner under test reaches the server through a {@link FreezableProxy} (frozen: nothing forwarded,
 * nothing dropped) with a session timeout of 30 s, far above the stalls, and a request timeout of 1 s. While its
 * release is unconfirmed the service hands out nothing: {@code held()} is empty, a try finds something in the way
 * at once, and an acquisition waits for the release, then claims anew with a new node, so a newer token; the
 * delete that arrives late is the release, never a loss. A release is not interruptible.
 */
class UnconfirmedReleaseTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);
    private static final int SESSION_MS = 30_000;
    /** The most a release may take beyond the request timeout. */
    private static final long SLACK_MS = 1_500;

    private FreezableProxy proxy;
    private CuratorFramework client;
    private ZooKeeperSession session;
    private DiscoBackend.Owner other;

    @AfterEach
    void close() {
        if (proxy != null) {
            proxy.thaw();
        }
        if (other != null) {
            other.close();
        }
        if (session != null) {
            session.close();
        }
        if (client != null) {
            client.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    /** The owner under test: its own client and session, through its own proxy. */
    private ZooKeeperSession stallable() throws Exception {
        String cs = ZK.connectString();
        proxy = new FreezableProxy(Integer.parseInt(cs.substring(cs.lastIndexOf(':') + 1)));
        client = ZkContractBackend.client(proxy.connectString(), SESSION_MS);
        session = ZooKeeperSession.open(
                client,
                ZooKeeperOptions.builder()
                        .connectTimeout(Duration.ofSeconds(10))
                        .requestTimeout(REQUEST_TIMEOUT)
                        .build());
        return session;
    }

    private static String name(String what) {
        return "/unconfirmed-release/" + what + "-" + UUID.randomUUID();
    }

    /** Runs a release on a thread of its own; what it threw (null: it returned), within the request timeout and the slack. */
    private static Throwable releaseWithin(Runnable release, String what) throws Exception {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        release.run();
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(e);
                    }
                },
                "releaser");
        t.setDaemon(true);
        t.start();
        try {
            return outcome.get(REQUEST_TIMEOUT.toMillis() + SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            fail(what + " did not return within the request timeout of " + REQUEST_TIMEOUT.toMillis() + " ms (+ "
                    + SLACK_MS + " ms) while ZooKeeper did not answer: a release is bounded by the request timeout");
            throw e;
        }
    }

    /** The release's failure says what is true: no answer in time, the grant given up, the delete going on, a new token next. */
    private static void assertGivenUpMessage(Throwable outcome, Class<? extends DiscoException> lossType, String what) {
        assertNotNull(outcome, what + " returned although ZooKeeper never answered its delete");
        assertTrue(outcome instanceof DiscoException, what + " threw " + outcome);
        assertFalse(lossType.isInstance(outcome), what + ": our own unanswered release is no loss: " + outcome);
        String m = outcome.getMessage();
        assertTrue(m.contains("within " + REQUEST_TIMEOUT.toMillis() + " ms"), m);
        assertTrue(m.contains("given up") && m.contains("no longer holds"), m);
        assertTrue(m.contains("background") && m.contains("session ends"), m);
        assertTrue(m.contains("new token"), m);
    }

    @Test
    void anUnansweredUnlockGivesTheGrantUpAndTheNextGrantsHaveNewerTokens() throws Exception {
        String name = name("lock");
        LockService lock = stallable().newLock(name);
        other = ZK.backend().open(Duration.ofSeconds(30));
        LockService theirs = other.newLock(name);
        Grant first = lock.lock(Duration.ofSeconds(5));

        proxy.freeze();
        long start = System.nanoTime();
        Throwable outcome = releaseWithin(lock::unlock, "unlock()");
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertGivenUpMessage(outcome, io.disco.lock.LockLostException.class, "unlock()");
        assertTrue(
                took >= REQUEST_TIMEOUT.toMillis() - 50,
                "the release waited the request timeout for its answer, took " + took + " ms");
        assertEquals(
                List.of(first.key()), ZK.backend().keys(name), "the delete was not delivered: the node is still there");
        assertEquals(Optional.empty(), lock.held(), "the grant is given up");
        long tryStart = System.nanoTime();
        assertEquals(
                Optional.empty(), lock.tryLock(), "nothing is handed out from a grant whose release is unconfirmed");
        long tried = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - tryStart);
        assertTrue(
                tried < REQUEST_TIMEOUT.toMillis() / 2,
                "the try found the release in the way at once, took " + tried + " ms");

        CompletableFuture<Grant> next = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return lock.lock(Duration.ofSeconds(20));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                ThreadPerTask.DAEMON); // a thread of its own, not the common pool
        CompletableFuture<Grant> theirsNext = theirs.lockAsync();
        Awaitility.await()
                .during(Duration.ofMillis(300))
                .atMost(Duration.ofSeconds(2))
                .until(() -> !next.isDone() && !theirsNext.isDone());
        assertEquals(Optional.empty(), lock.err(), "no loss");
        assertFalse(lock.done().toCompletableFuture().isDone(), "no loss");
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(name).size() == 2); // theirs queues behind ours
        assertTrue(
                ZK.backend().keys(name).contains(first.key()),
                "our released node is still there, and nothing new of ours");
        proxy.thaw();

        Grant t = theirsNext.get(10, TimeUnit.SECONDS); // its node was created during the stall: ahead of our new one
        assertTrue(t.token().isNewerThan(first.token()), first + " then " + t);
        assertFalse(next.isDone(), "both granted at once: " + t + ", " + next.getNow(null));
        theirs.unlock();
        Grant mine = next.get(10, TimeUnit.SECONDS);
        assertNotEquals(first.key(), mine.key(), "a new node, not the one being released");
        assertTrue(mine.token().isNewerThan(t.token()), t + " then " + mine);
        assertEquals(Optional.empty(), lock.err(), "the late delete is the release, no loss");
        assertFalse(lock.done().toCompletableFuture().isDone(), "the late delete is the release, no loss");
        lock.unlock();
        assertEquals(List.of(), ZK.backend().keys(name));
    }

    @Test
    void aReleaseCalledAgainWaitsForTheSamePendingReleaseAndKeepsAnInterrupt() throws Exception {
        String name = name("again");
        LockService lock = stallable().newLock(name);
        Grant first = lock.lock(Duration.ofSeconds(5));
        proxy.freeze();
        assertGivenUpMessage(
                releaseWithin(lock::unlock, "unlock()"), io.disco.lock.LockLostException.class, "unlock()");

        CompletableFuture<Boolean> flagKept = new CompletableFuture<>();
        long start = System.nanoTime();
        Throwable again = releaseWithin(
                () -> {
                    Thread.currentThread().interrupt();
                    try {
                        lock.unlock();
                    } finally {
                        flagKept.complete(Thread.interrupted());
                    }
                },
                "unlock() again, interrupted");
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertGivenUpMessage(again, io.disco.lock.LockLostException.class, "unlock() again");
        assertTrue(
                took >= REQUEST_TIMEOUT.toMillis() - 50,
                "the interrupted release waited all the same, took " + took + " ms");
        assertTrue(flagKept.getNow(false), "the interrupt flag is kept");

        proxy.thaw();
        lock.unlock(); // the same release once more: confirmed now
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> ZK.backend().keys(name).isEmpty());
        Grant next = lock.lock(Duration.ofSeconds(10));
        assertTrue(next.token().isNewerThan(first.token()), first + " then " + next);
        assertEquals(Optional.empty(), lock.err());
        lock.unlock();
    }

    /**
     * The delete is delivered and applied, its answer held back, then the connection drops: the client connects
     * again on the same session and finds its node gone. That is its own release (the copy it sent before), not a
     * loss, and not a "gone before the release".
     */
    @Test
    void aDeleteAppliedWhoseAnswerWasLostIsTheReleaseNotALoss() throws Exception {
        String name = name("answer-lost");
        LockService lock = stallable().newLock(name);
        Grant first = lock.lock(Duration.ofSeconds(5));
        proxy.freezeReplies();
        assertGivenUpMessage(
                releaseWithin(lock::unlock, "unlock()"), io.disco.lock.LockLostException.class, "unlock()");
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(name).isEmpty()); // applied, unanswered
        assertEquals(Optional.empty(), lock.tryLock(), "the release is still unconfirmed here");

        proxy.dropConnections();
        proxy.thaw();
        Grant next = lock.lock(Duration.ofSeconds(15));
        assertNotEquals(first.key(), next.key());
        assertTrue(next.token().isNewerThan(first.token()), first + " then " + next);
        assertEquals(Optional.empty(), lock.err(), "our own delete, applied before the connection dropped, is no loss");
        assertFalse(lock.done().toCompletableFuture().isDone());
        lock.unlock();
        assertEquals(List.of(), ZK.backend().keys(name));
    }

    /** One primitive, as the rule sees it. */
    private record Primitive(
            String what,
            Class<? extends DiscoException> lossType,
            Callable<Fenced> acquire,
            Supplier<Optional<? extends Fenced>> tryAcquire,
            Runnable release,
            Supplier<Optional<? extends Fenced>> held,
            Supplier<CompletionStage<Void>> done,
            Supplier<Optional<? extends DiscoException>> err,
            Function<Fenced, String> key) {}

    private static Primitive writeLock(RWLockService rw) {
        return new Primitive(
                "rwlock.unlock()",
                io.disco.rwlock.RWLockLostException.class,
                () -> rw.lock(Duration.ofSeconds(20)),
                rw::tryLock,
                rw::unlock,
                rw::held,
                rw::done,
                rw::err,
                f -> ((RWGrant) f).key());
    }

    private static Primitive readLock(RWLockService rw) {
        return new Primitive(
                "rwlock.rUnlock()",
                io.disco.rwlock.RWLockLostException.class,
                () -> rw.rLock(Duration.ofSeconds(20)),
                rw::tryRLock,
                rw::rUnlock,
                rw::held,
                rw::done,
                rw::err,
                f -> ((RWGrant) f).key());
    }

    private static Primitive semaphore(SemaphoreService s) {
        return new Primitive(
                "semaphore.release()",
                io.disco.semaphore.SemaphoreLostException.class,
                () -> s.acquire(Duration.ofSeconds(20)),
                s::tryAcquire,
                s::release,
                s::held,
                s::done,
                s::err,
                f -> ((Permit) f).key());
    }

    private static Primitive election(ElectionService e) {
        return new Primitive(
                "election.resign()",
                io.disco.election.LeadershipLostException.class,
                () -> e.campaign("me", Duration.ofSeconds(20)),
                () -> {
                    try { // no try-campaign: a campaign of its own short timeout
                        return Optional.of(e.campaign("me", Duration.ofMillis(300)));
                    } catch (TimeoutException timedOut) {
                        return Optional.empty();
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(interrupted);
                    }
                },
                e::resign,
                e::held,
                e::done,
                e::err,
                f -> ((Leadership) f).key());
    }

    /** The rule on one primitive: given up at the unanswered release, nothing handed out, claimed anew after. */
    private void givesUpAndClaimsAnew(String name, Primitive p) throws Exception {
        Fenced first = p.acquire().call();
        proxy.freeze();
        try {
            assertGivenUpMessage(releaseWithin(p.release(), p.what()), p.lossType(), p.what());
            assertEquals(Optional.empty(), p.held().get(), p.what() + ": the grant is given up");
            assertEquals(
                    Optional.empty(),
                    p.tryAcquire().get(),
                    p.what() + ": nothing is handed out while the release is unconfirmed");
            assertTrue(
                    ZK.backend().keys(name).contains(p.key().apply(first)),
                    p.what() + ": the delete was not delivered");
        } finally {
            proxy.thaw();
        }
        Fenced next = p.acquire().call();
        assertNotEquals(p.key().apply(first), p.key().apply(next), p.what() + ": a new node");
        if (p.what().equals("rwlock.rUnlock()")) { // readers of one phase share its marker's token: a new node, in the
            // phase
            assertFalse(first.token().isNewerThan(next.token()), p.what() + ": " + first + " then " + next);
        } else {
            assertTrue(next.token().isNewerThan(first.token()), p.what() + ": " + first + " then " + next);
        }
        assertEquals(Optional.empty(), p.err().get(), p.what() + ": no loss");
        assertFalse(p.done().get().toCompletableFuture().isDone(), p.what() + ": no loss");
        p.release().run();
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> ZK.backend().keys(name).isEmpty());
    }

    @Test
    void theReadWriteLockTheSemaphoreAndTheElectionGiveAnUnansweredReleaseUpAlike() throws Exception {
        ZooKeeperSession s = stallable();
        String rw = name("rw");
        RWLockService rwLock = s.newRWLock(rw);
        givesUpAndClaimsAnew(rw, writeLock(rwLock));
        givesUpAndClaimsAnew(rw, readLock(rwLock));
        String sem = name("semaphore");
        SemaphoreService semaphore = s.newSemaphore(sem, 1);
        Permit before = semaphore.acquire(Duration.ofSeconds(5));
        semaphore.release();
        givesUpAndClaimsAnew(sem, semaphore(semaphore));
        Permit after = semaphore.acquire(Duration.ofSeconds(5));
        assertEquals(before.slot(), after.slot(), "the only slot, freed by the late release");
        semaphore.release();
        String el = name("election");
        givesUpAndClaimsAnew(el, election(s.newElection(el)));
    }

    /** Not stalled: a release made with the interrupt flag set completes, throws nothing and keeps the flag. */
    @Test
    void anInterruptedReleaseCompletesKeepsTheFlagAndThrowsNothing() throws Exception {
        ZooKeeperSession s = stallable();
        String lockName = name("interrupted-lock");
        LockService lock = s.newLock(lockName);
        releasedInterrupted(lockName, () -> lock.lock(Duration.ofSeconds(5)), lock::unlock, lock::held);
        String rwName = name("interrupted-rw");
        RWLockService rw = s.newRWLock(rwName);
        releasedInterrupted(rwName, () -> rw.lock(Duration.ofSeconds(5)), rw::unlock, rw::held);
        releasedInterrupted(rwName, () -> rw.rLock(Duration.ofSeconds(5)), rw::rUnlock, rw::held);
        String semName = name("interrupted-semaphore");
        SemaphoreService semaphore = s.newSemaphore(semName, 2);
        releasedInterrupted(
                semName, () -> semaphore.acquire(Duration.ofSeconds(5)), semaphore::release, semaphore::held);
        String elName = name("interrupted-election");
        ElectionService election = s.newElection(elName);
        releasedInterrupted(
                elName, () -> election.campaign("me", Duration.ofSeconds(5)), election::resign, election::held);
        assertTrue(lock.err().isEmpty()
                && rw.err().isEmpty()
                && semaphore.err().isEmpty()
                && election.err().isEmpty());
    }

    private static void releasedInterrupted(
            String name,
            Callable<? extends Fenced> acquire,
            Runnable release,
            Supplier<Optional<? extends Fenced>> held)
            throws Exception {
        Fenced g = acquire.call();
        assertTrue(held.get().isPresent());
        Thread.currentThread().interrupt();
        try {
            release.run();
        } catch (RuntimeException e) {
            throw new AssertionError("an interrupted release of " + g + " threw " + e, e);
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt flag is kept");
        }
        assertEquals(Optional.empty(), held.get());
        assertEquals(List.of(), ZK.backend().keys(name), "the release of " + g + " completed");
    }
}
