package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.FencedSemaphore;
import io.disco.fencing.DiscoException;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.semaphore.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A release that gets no answer in time (issue 44): the backend stops answering one client for longer than its
 * request timeout and shorter than its owners' time to live, while a thread releases. The rules every backend
 * keeps:
 * <ul>
 *   <li>The release returns, or throws a {@link DiscoException} that is not a loss, within about the request
 *       timeout, and the thread no longer holds: the hold is given up locally.</li>
 *   <li>No thread of that client is granted anything from the claim whose release is unconfirmed: a
 *       {@code tryLock()} during the stall is refused, and every hold ever granted has a token no other hold
 *       shares. A local acquisition waits until the release is confirmed, then claims anew with a newer token.</li>
 *   <li>Holds never overlap, in one process or across two.</li>
 *   <li>{@code done()} of a hold completes when the hold ends: at its release, not later.</li>
 *   <li>An interrupted release completes all the same, keeps the interrupt flag and throws nothing.</li>
 * </ul>
 * Extend it with a {@link #backend()} and a {@link #stallableBackend}.
 */
public abstract class UnconfirmedReleaseContract extends ContractSupport {

    /**
     * A client's backend like {@code backend().withTtl(ttl)}, with the given request timeout, whose link to the
     * servers the kit can stall (see {@link StallableClient.Link}): its own connection, so that stalling it stalls no
     * other owner of the test. The kit closes the client it makes on it and resumes the link after each test; the
     * backend closes the link when the run ends.
     *
     * @param ttl            each owner's lease time to live
     * @param requestTimeout how long a request of the client may wait for its answer
     * @return the client's backend and its link
     */
    protected abstract StallableClient stallableBackend(Duration ttl, Duration requestTimeout);

    /** The request timeout of the stalled client: the stall lasts longer than this, far less than the TTL. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1000);

    private static final Duration STALL = Duration.ofMillis(2500);
    private static final int TTL_SECONDS = 30;
    private static final long WAIT_SECONDS = 20;

    private final List<ExecutorService> actors = new ArrayList<>();
    private StallableClient.Link link;

    /** Never leaves a link stalled, or an actor's thread running, for the next test. */
    @AfterEach
    void resumeLinkAndStopActors() {
        if (link != null) {
            link.resume();
        }
        actors.forEach(ExecutorService::shutdownNow);
    }

    private Disco stallableClient() {
        StallableClient c = stallableBackend(Duration.ofSeconds(TTL_SECONDS), REQUEST_TIMEOUT);
        link = c.link();
        return track(Disco.over(c.backend()));
    }

    /** A thread of its own that runs what it is given in order: a thread-owned hold is taken and released there. */
    private ExecutorService actor() {
        ExecutorService e = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "contract-actor");
            t.setDaemon(true);
            return t;
        });
        actors.add(e);
        return e;
    }

    private static <T> T on(ExecutorService actor, Callable<T> task) throws Exception {
        return actor.submit(task).get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** One hold, as the resource would see it: who, with which token, from when to when (nanoTime). */
    private record Hold(String who, FencingToken token, long from, long to) {}

    /** On a thread of its own: takes {@code lock} within the wait, holds it 100 ms, releases it; the hold, or null. */
    private CompletableFuture<Hold> holdOnce(String who, FencedLock lock) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        if (!lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                            return null;
                        }
                        long from = System.nanoTime();
                        FencingToken token = lock.token();
                        Thread.sleep(100); // the critical section: a hold that lasts, so that an overlap would show
                        long to = System.nanoTime();
                        lock.unlock();
                        return new Hold(who, token, from, to);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                actor());
    }

    /**
     * The scenario of issue 44 on one kind of exclusive lock: it is held by one thread; the backend stalls;
     * that thread releases; another thread of the same client tries at once and is refused; one more thread
     * of it and one of another client wait; the backend resumes. Every hold has a token of its own, newer than
     * the first, and no two overlap.
     */
    private void releaseWithoutAnAnswer(String name, Function<Disco, FencedLock> lockOf) throws Exception {
        Disco stalled = stallableClient();
        Disco other = client(TTL_SECONDS);
        FencedLock mine = lockOf.apply(stalled);
        ExecutorService holder = actor();
        FencingToken first = on(holder, () -> {
            mine.lock();
            return mine.token();
        });

        link.stall();
        long start = System.nanoTime();
        Object outcome = on(holder, () -> {
            try {
                mine.unlock();
                return "returned";
            } catch (RuntimeException e) {
                return e;
            }
        });
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(
                outcome.equals("returned") || outcome instanceof DiscoException,
                "an unanswered release returns or throws a DiscoException, got " + outcome);
        assertFalse(outcome instanceof io.disco.lock.LockLostException, "our own release is no loss: " + outcome);
        assertTrue(
                took < REQUEST_TIMEOUT.toMillis() * 3,
                "the release is bounded by the request timeout, took " + took + " ms");
        assertFalse(on(holder, () -> mine.isHeldByCurrentThread()), "the hold is given up locally");

        FencedLock sibling = lockOf.apply(stalled);
        assertFalse(
                on(actor(), () -> sibling.tryLock()), "no thread is granted from a claim whose release is unconfirmed");

        CompletableFuture<Hold> local = holdOnce("same process", lockOf.apply(stalled));
        CompletableFuture<Hold> remote = holdOnce("other process", lockOf.apply(other));
        long stalledFor = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        Thread.sleep(Math.max(0, STALL.toMillis() - stalledFor)); // the stall: the one thing this test is about
        link.resume();

        List<Hold> holds = new ArrayList<>(
                List.of(local.get(WAIT_SECONDS * 2, TimeUnit.SECONDS), remote.get(WAIT_SECONDS * 2, TimeUnit.SECONDS)));
        Set<FencingToken> tokens = new HashSet<>();
        for (Hold h : holds) {
            assertNotNull(h, "both waiters are granted once the backend answers again");
            assertTrue(h.token().isNewerThan(first), h.who() + "'s token " + h.token() + " is not newer than " + first);
            assertTrue(tokens.add(h.token()), "two holds with token " + h.token() + ": " + holds);
        }
        holds.sort(Comparator.comparingLong(Hold::from));
        assertTrue(holds.get(0).to() <= holds.get(1).from(), "two holds at once: " + holds);
        awaitKeyCount(name, 0);
    }

    @Test
    void aLockReleasedWithoutAnAnswerIsNeverHandedToAnotherHolder() throws Exception {
        String name = uniqueName("unconfirmed-release-lock");
        releaseWithoutAnAnswer(name, d -> d.lock(name));
    }

    @Test
    void aWriteLockReleasedWithoutAnAnswerIsNeverHandedToAnotherHolder() throws Exception {
        String name = uniqueName("unconfirmed-release-write");
        releaseWithoutAnAnswer(name, d -> d.readWriteLock(name).writeLock());
    }

    @Test
    void aReadClaimReleasedWithoutAnAnswerIsNotJoinedWhileAWriterMayHold() throws Exception {
        String name = uniqueName("unconfirmed-release-read");
        Disco stalled = stallableClient();
        Disco other = client(TTL_SECONDS);
        ExecutorService reader = actor();
        FencedLock read = stalled.readWriteLock(name).readLock();
        FencingToken first = on(reader, () -> {
            read.lock();
            return read.token();
        });
        link.stall();
        on(reader, () -> {
            try {
                read.unlock();
            } catch (DiscoException e) {
                assertFalse(e instanceof io.disco.rwlock.RWLockLostException, "our own release is no loss: " + e);
            }
            return null;
        });
        FencedLock otherReader = stalled.readWriteLock(name).readLock();
        assertFalse(
                on(actor(), () -> otherReader.tryLock()), "no reader joins a read claim whose release is unconfirmed");
        CompletableFuture<Hold> writer =
                holdOnce("writer", other.readWriteLock(name).writeLock());
        CompletableFuture<Hold> nextReader =
                holdOnce("reader", stalled.readWriteLock(name).readLock());
        Thread.sleep(STALL.toMillis());
        link.resume();
        Hold w = writer.get(WAIT_SECONDS * 2, TimeUnit.SECONDS);
        Hold r = nextReader.get(WAIT_SECONDS * 2, TimeUnit.SECONDS);
        assertNotNull(w);
        assertNotNull(r);
        assertTrue(
                r.token().isNewerThan(first),
                "a new read claim, not the one being released: " + r.token() + " vs " + first);
        assertTrue(w.to() <= r.from() || r.to() <= w.from(), "a reader and a writer at once: " + w + ", " + r);
        awaitKeyCount(name, 0);
    }

    @Test
    void aPermitReleasedWithoutAnAnswerIsGivenUpAndItsSlotNotReusedUntilConfirmed() throws Exception {
        String name = uniqueName("unconfirmed-release-permit");
        Disco stalled = stallableClient();
        FencedSemaphore semaphore = stalled.semaphore(name, 1);
        Permit first = semaphore.acquire(Duration.ofSeconds(WAIT_SECONDS));
        link.stall();
        try {
            semaphore.release(first);
        } catch (DiscoException e) {
            assertFalse(e instanceof io.disco.semaphore.SemaphoreLostException, "our own release is no loss: " + e);
        }
        try {
            assertTrue(
                    semaphore.tryAcquire().isEmpty(), "the only permit's release is unconfirmed: nothing to hand out");
        } catch (DiscoException e) {
            // no answer during the stall: not granted either
        }
        Thread.sleep(STALL.toMillis());
        link.resume();
        Permit second = semaphore.acquire(Duration.ofSeconds(WAIT_SECONDS));
        assertEquals(first.slot(), second.slot());
        assertTrue(second.token().isNewerThan(first.token()), first + " then " + second);
        semaphore.release(second);
        awaitKeyCount(name, 0);
    }

    /**
     * {@code done()} ends with the hold, not with the name's claim: another thread of the client waits for the
     * name, so the claim goes on after the release (before, done() completed only when the claim ended: a
     * later loss, or the client's close).
     */
    @Test
    void doneCompletesAtTheReleaseOfTheHold() throws Exception {
        String name = uniqueName("done-at-release");
        Disco disco = client(TTL_SECONDS);
        assertDoneAtRelease(disco.lock(name), disco.lock(name));
        assertDoneAtRelease(
                disco.readWriteLock(name + "-rw").writeLock(),
                disco.readWriteLock(name + "-rw").writeLock());
        assertDoneAtRelease(
                disco.readWriteLock(name + "-rw").readLock(),
                disco.readWriteLock(name + "-rw").writeLock());
    }

    private void assertDoneAtRelease(FencedLock first, FencedLock next) throws Exception {
        ExecutorService holder = actor();
        ExecutorService nextHolder = actor();
        CompletableFuture<Void> done = on(holder, () -> {
            first.lock();
            return first.done().toCompletableFuture();
        });
        Future<FencingToken> waiter = nextHolder.submit(
                () -> { // keeps the name in use after the release
                    next.lock();
                    return next.token();
                });
        on(holder, () -> {
            first.unlock();
            return null;
        });
        waiter.get(WAIT_SECONDS, TimeUnit.SECONDS);
        done.get(5, TimeUnit.SECONDS); // while the next thread still holds the name
        on(nextHolder, () -> {
            next.unlock();
            return null;
        });
    }

    /**
     * A holder whose key disappears without its own confirmed release (an operator's delete) is told on every
     * channel: {@code done()} completes, {@code err()} holds the loss, {@code token()} and the last
     * {@code unlock()} throw it; and the next holder of the same client has a newer token.
     */
    @Test
    void aHolderWhoseKeyIsDeletedByAnotherIsToldOnEveryChannel() throws Exception {
        String name = uniqueName("key-deleted-under-holder");
        Disco disco = client(TTL_SECONDS);
        ExecutorService holder = actor();
        FencedLock lock = disco.lock(name);
        FencingToken first = on(holder, () -> {
            lock.lock();
            return lock.token();
        });
        CompletableFuture<Void> done = on(holder, () -> lock.done().toCompletableFuture());
        List<String> keys = keys(name);
        assertEquals(1, keys.size());
        backend().deleteKey(keys.get(0));
        done.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertTrue(on(holder, () -> lock.err().isPresent()), "err() holds the loss");
        Object token = on(holder, () -> {
            try {
                return lock.token();
            } catch (DiscoException e) {
                return e;
            }
        });
        assertTrue(token instanceof io.disco.lock.LockLostException, "token() throws the loss, got " + token);
        Object unlocked = on(holder, () -> {
            try {
                lock.unlock();
                return "returned";
            } catch (DiscoException e) {
                return e;
            }
        });
        assertTrue(unlocked instanceof io.disco.lock.LockLostException, "unlock() throws the loss, got " + unlocked);
        FencedLock again = disco.lock(name);
        assertTrue(again.tryLock(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(again.token().isNewerThan(first));
        again.unlock();
        awaitKeyCount(name, 0);
    }

    @Test
    void anInterruptedReleaseCompletesKeepsTheFlagAndThrowsNothing() throws Exception {
        String name = uniqueName("interrupted-release");
        Disco disco = client(TTL_SECONDS);
        Disco other = client(TTL_SECONDS);
        ExecutorService holder = actor();
        FencedLock lock = disco.lock(name);
        FencingToken first = on(holder, () -> {
            lock.lock();
            return lock.token();
        });
        boolean flagKept = on(holder, () -> {
            Thread.currentThread().interrupt();
            lock.unlock(); // throws nothing: the release is not interruptible
            return Thread.interrupted();
        });
        assertTrue(flagKept, "the interrupt flag is kept");
        assertFalse(on(holder, () -> lock.isHeldByCurrentThread()));
        awaitKeyCount(name, 0);
        FencedLock theirs = other.lock(name);
        assertTrue(theirs.tryLock(5, TimeUnit.SECONDS));
        assertTrue(theirs.token().isNewerThan(first));
        theirs.unlock();

        FencedSemaphore semaphore = disco.semaphore(name + "-semaphore", 1);
        Permit permit = semaphore.acquire(Duration.ofSeconds(5));
        Thread.currentThread().interrupt();
        try {
            semaphore.release(permit);
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt flag is kept");
        }
        awaitKeyCount(name + "-semaphore", 0);
    }
}
