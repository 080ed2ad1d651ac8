package io.disco.contract;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.BackendUnavailableException;
import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The client ({@link Disco}) while its backend cannot be reached (issue 45, item 3): waiting for a holder is an
 * acquisition's contract, waiting for an unreachable backend is not. While the client has no owner, an
 * acquisition waits at most the owner wait ({@code DiscoBackend.ownerWait()}) and then throws
 * {@link BackendUnavailableException} naming the endpoints; acquisitions that start after that fail at once
 * until an owner is open again; a timed acquisition whose own timeout ends first returns false as before;
 * {@link Disco#status()} answers at once whatever the acquisitions wait for; and once the backend answers again
 * the client is up and acquisitions succeed, with higher tokens. Extend it with a {@link #backend()} and an
 * {@link #unreachableBackend}.
 */
public abstract class UnreachableBackendContract extends ContractSupport {

    /**
     * A client's backend like {@code backend().withTtl(ttl)}, with the given request timeout and owner wait
     * ({@code DiscoBackend.ownerWait()}), whose link to the servers the kit can cut for as long as it likes (its own
     * connection, so that cutting it cuts no other owner of the test), and the endpoints its failures must name. The
     * kit cuts the link before or after making a client on it, and restores it before the test ends; the kit closes
     * the client, the backend closes the link when the run ends.
     *
     * @param ttl            each owner's time to live
     * @param requestTimeout how long a request of the client (and opening an owner) may wait for its answer
     * @param ownerWait      how long an acquisition waits for an owner while the client has none
     * @return the client's backend, its endpoints and its link
     */
    protected abstract UnreachableClient unreachableBackend(Duration ttl, Duration requestTimeout, Duration ownerWait);

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration OWNER_WAIT = Duration.ofSeconds(2);
    /** What a loaded 2-core machine may add to a bound: scheduling, an open attempt in progress. */
    private static final long SLACK_MS = 3_000;

    /** A cut-off client's backend whose link is restored after the test (before its clients are closed). */
    private UnreachableClient unreachable() {
        UnreachableClient u = unreachableBackend(TTL, REQUEST_TIMEOUT, OWNER_WAIT);
        track(() -> u.link().resume());
        return u;
    }

    private static <T> CompletableFuture<T> onItsThread(java.util.concurrent.Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        THREADS.execute(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /** Runs {@code acquisition} on a thread of its own; returns how long it took to throw, and what. */
    private static Failed failure(java.util.concurrent.Callable<?> acquisition, long withinMs) throws Exception {
        CompletableFuture<Failed> f = onItsThread(() -> {
            long start = System.nanoTime();
            try {
                acquisition.call();
            } catch (Exception e) {
                return new Failed(e, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            }
            throw new AssertionError("acquired while the backend is unreachable");
        });
        try {
            return f.get(withinMs + 5_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("did not fail as expected", e.getCause());
        }
    }

    private record Failed(Exception thrown, long tookMs) {}

    /** @return how {@code lock()} on {@code name} failed, which it must within the owner wait (and the slack) */
    private static Failed failedLock(Disco disco, String name) throws Exception {
        return failure(
                () -> {
                    disco.lock(name).lock();
                    return null;
                },
                OWNER_WAIT.toMillis() + SLACK_MS);
    }

    /** Asserts that {@code lock()} failed within the owner wait (and the slack), naming the endpoints. */
    private static void assertFailedWithinTheOwnerWait(Failed lock, UnreachableClient u) {
        namesTheEndpoints(lock.thrown(), u);
        assertTrue(lock.tookMs() < OWNER_WAIT.toMillis() + SLACK_MS, "lock() threw after " + lock.tookMs() + " ms");
    }

    private static void namesTheEndpoints(Throwable e, UnreachableClient u) {
        assertInstanceOf(BackendUnavailableException.class, e);
        assertTrue(
                e.getMessage().contains(u.endpoints()), "the failure names " + u.endpoints() + ": " + e.getMessage());
    }

    @Test
    void anAcquisitionWithoutAnOwnerFailsWithinTheOwnerWaitNamingTheEndpoints() throws Exception {
        UnreachableClient u = unreachable();
        u.link().stall();
        Disco disco = track(Disco.healing(u.backend()));
        String name = uniqueName("unreachable");
        assertEquals(DiscoStatus.State.HEALING, disco.status().state());

        // tryLock(timeout) keeps its own bound: shorter than the owner wait, it returns false at its timeout
        long start = System.nanoTime();
        assertFalse(onItsThread(() -> disco.lock(name).tryLock(300, TimeUnit.MILLISECONDS))
                .get(10, TimeUnit.SECONDS));
        long tryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tryMs >= 250 && tryMs < 300 + SLACK_MS, "tryLock(300 ms) returned after " + tryMs + " ms");

        // lock() waits for an owner at most the owner wait
        assertFailedWithinTheOwnerWait(failedLock(disco, name), u);

        // past the owner wait, every kind of acquisition fails at once, and says why
        for (java.util.concurrent.Callable<?> acquisition : List.<java.util.concurrent.Callable<?>>of(
                () -> {
                    disco.lock(name).lock();
                    return null;
                },
                () -> {
                    disco.lock(name).lockInterruptibly();
                    return null;
                },
                () -> {
                    disco.readWriteLock(name + "-rw").readLock().lock();
                    return null;
                },
                () -> {
                    disco.readWriteLock(name + "-rw").writeLock().lock();
                    return null;
                },
                () -> disco.semaphore(name + "-semaphore", 2).acquire())) {
            Failed f = failure(acquisition, SLACK_MS);
            namesTheEndpoints(f.thrown(), u);
            assertTrue(f.tookMs() < SLACK_MS, "failed after " + f.tookMs() + " ms, not at once");
        }
        DiscoStatus healing = disco.status();
        assertEquals(DiscoStatus.State.HEALING, healing.state());
        assertTrue(
                healing.lastProblem().orElse("").contains(u.endpoints()), "the status names the endpoints: " + healing);

        // back: the client is up, and acquisitions succeed
        u.link().resume();
        await().atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> disco.status().state() == DiscoStatus.State.UP);
        assertTrue(onItsThread(() -> {
                    FencedLock l = disco.lock(name);
                    if (!l.tryLock(10, TimeUnit.SECONDS)) {
                        return false;
                    }
                    l.unlock();
                    return true;
                })
                .get(20, TimeUnit.SECONDS));
    }

    @Test
    void statusAnswersAtOnceWhileFiftyThreadsWaitForAnOwner() throws Exception {
        UnreachableClient u = unreachable();
        u.link().stall();
        Disco disco = track(Disco.healing(u.backend()));
        String base = uniqueName("unreachable-status");
        List<CompletableFuture<Failed>> waiting = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String name = base + "/" + i;
            waiting.add(onItsThread(() -> failedLock(disco, name)));
        }
        await().atMost(SOON)
                .until(() -> disco.holdings().size() == 50 || waiting.stream().anyMatch(CompletableFuture::isDone));
        long slowest = 0;
        for (int i = 0; i < 20; i++) {
            long t = System.nanoTime();
            DiscoStatus s = disco.status();
            slowest = Math.max(slowest, System.nanoTime() - t);
            assertEquals(DiscoStatus.State.HEALING, s.state(), s.toString());
        }
        assertTrue(
                slowest < TimeUnit.MILLISECONDS.toNanos(200),
                "status() took " + slowest / 1_000_000 + " ms while 50 threads waited");
        for (CompletableFuture<Failed> w : waiting) {
            Failed f = w.get(OWNER_WAIT.toMillis() + SLACK_MS + 10_000, TimeUnit.MILLISECONDS);
            assertFailedWithinTheOwnerWait(f, u);
        }
    }

    @Test
    void aClientThatLosesItsBackendBoundsItsWaitsAndHealsWhenItAnswers() throws Exception {
        UnreachableClient u = unreachable();
        Disco disco = track(Disco.over(u.backend()));
        String name = uniqueName("unreachable-heal");
        FencingToken before = onItsThread(() -> {
                    FencedLock l = disco.lock(name);
                    l.lock();
                    try {
                        return l.token();
                    } finally {
                        l.unlock();
                    }
                })
                .get(20, TimeUnit.SECONDS);

        u.link().stall();
        await().atMost(TTL.plusSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> disco.status().state() == DiscoStatus.State.HEALING);
        assertFailedWithinTheOwnerWait(failedLock(disco, name), u);

        u.link().resume();
        long resumed = System.nanoTime();
        await().atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> disco.status().state() == DiscoStatus.State.UP);
        long upMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed);
        assertTrue(upMs < 2_000 + SLACK_MS, "up " + upMs + " ms after the backend answered again");
        FencingToken after = onItsThread(() -> {
                    FencedLock l = disco.lock(name);
                    if (!l.tryLock(10, TimeUnit.SECONDS)) {
                        throw new AssertionError("not acquired after the backend came back");
                    }
                    try {
                        return l.token();
                    } finally {
                        l.unlock();
                    }
                })
                .get(20, TimeUnit.SECONDS);
        assertTrue(after.compareTo(before) > 0, "a higher token: " + after + " after " + before);
    }
}
