package io.disco.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoBackend;
import io.disco.client.DiscoStatus;
import io.disco.client.FencedReadWriteLock;
import io.disco.client.FencedSemaphore;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.LeaderTask;
import io.disco.election.Leadership;
import io.disco.election.LeadershipRunner;
import io.disco.fencing.Held;
import io.disco.lock.FencedLock;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The rules every primitive keeps the same way, on every backend (issue 45, item 8): one name rule, checked up
 * front by the client and by the backend's own services alike; one timeout rule (zero or less tries once, at
 * once; a timeout too long to count in nanoseconds waits without a limit); an interruptible acquisition whose
 * thread is interrupted on entry throws {@link InterruptedException} and changes nothing; and the client's
 * status tells a positive validity while it is up. Extend it with a {@link #backend()}.
 */
public abstract class UniformRulesContract extends TwoClientsContract {

    /** The longest {@link Duration}: far beyond what a {@code long} of nanoseconds counts. */
    private static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

    private static final Duration NEGATIVE = Duration.ofMillis(-1);
    /** How long a try may take: one answer of the backend, far less than this. */
    private static final long TRY_BOUND_MS = 5_000;

    // ------------------------------------------------------------------ names

    /** How a refusal of a name starts: the parameter's name (the client's, etcd's, ZooKeeper's), then the rule. */
    private static final Pattern PARAMETER = Pattern.compile("(name|prefix|path) ");

    /** Names every entry point refuses, each with why. */
    private static Map<String, String> badNames() {
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("", "empty");
        bad.put("   ", "blank");
        bad.put("locks/x", "not absolute");
        bad.put("x", "not absolute");
        bad.put("/", "the root");
        bad.put("/locks/x/", "ends in '/'");
        bad.put("/locks//x", "an empty segment");
        bad.put("/locks/./x", "a '.' segment");
        bad.put("/locks/../x", "a '..' segment");
        bad.put("/locks/..", "a '..' segment");
        bad.put("/locks/x\u0000y", "a NUL character");
        bad.put("/locks/x\ny", "a control character");
        bad.put("/locks/x\u0085", "a C1 control character");
        bad.put("/locks/x\uD83D\uDE00", "a character outside the Basic Multilingual Plane");
        bad.put("/locks/x\uE000", "a private-use character");
        bad.put("/locks/x\uFFFF", "a non-character");
        bad.put("/zookeeper", "ZooKeeper's reserved tree");
        bad.put("/zookeeper/x", "ZooKeeper's reserved tree");
        return bad;
    }

    /** Every way to name a primitive, the client's and the backend's own. */
    private List<Map.Entry<String, Consumer<String>>> entryPoints(DiscoBackend.Owner owner) {
        LeadershipRunner.Options options =
                LeadershipRunner.Options.of("v", term -> term.awaitEnd(Duration.ofMinutes(1)));
        List<Map.Entry<String, Consumer<String>>> all = new ArrayList<>();
        all.add(Map.entry("disco.lock", n -> disco.lock(n)));
        all.add(Map.entry("disco.readWriteLock", n -> disco.readWriteLock(n)));
        all.add(Map.entry("disco.semaphore", n -> disco.semaphore(n, 2)));
        all.add(Map.entry("disco.election", n -> disco.election(n)));
        all.add(Map.entry("disco.leadershipRunner", n -> track(disco.leadershipRunner(n, options))));
        all.add(Map.entry("disco.claimants", n -> disco.claimants(Primitive.LOCK, n)));
        all.add(Map.entry("owner.newLock", n -> owner.newLock(n).close()));
        all.add(Map.entry("owner.newRWLock", n -> owner.newRWLock(n).close()));
        all.add(Map.entry("owner.newSemaphore", n -> owner.newSemaphore(n, 2).close()));
        all.add(Map.entry("owner.newElection", n -> owner.newElection(n).close()));
        all.add(Map.entry("backend.newLeadershipRunner", n -> runner(n, options, 10)));
        return all;
    }

    @Test
    void oneNameRuleIsCheckedUpFrontByTheClientAndByTheBackendsServices() throws Exception {
        DiscoBackend.Owner owner = owner(10);
        for (Map.Entry<String, String> bad : badNames().entrySet()) {
            String message = null;
            for (Map.Entry<String, Consumer<String>> entry : entryPoints(owner)) {
                String what = entry.getKey() + "(\"" + printable(bad.getKey()) + "\"), " + bad.getValue();
                IllegalArgumentException e = assertThrows(
                        IllegalArgumentException.class,
                        () -> entry.getValue().accept(bad.getKey()),
                        what + " is refused");
                assertTrue(
                        e.getMessage() != null
                                && PARAMETER.matcher(e.getMessage()).lookingAt(),
                        what + ": the message names the parameter (name, or the backend's prefix or path): "
                                + e.getMessage());
                String rule = PARAMETER.matcher(e.getMessage()).replaceFirst(""); // the parameter's name aside
                if (message == null) {
                    message = rule;
                } else {
                    assertEquals(message, rule, what + ": one rule, in the same words, on every entry point");
                }
            }
        }
        for (Map.Entry<String, Consumer<String>> entry : entryPoints(owner)) {
            NullPointerException e = assertThrows(
                    NullPointerException.class, () -> entry.getValue().accept(null), entry.getKey());
            assertTrue(
                    e.getMessage() != null
                            && PARAMETER.matcher(e.getMessage() + " ").matches(),
                    entry.getKey() + ": the message names the parameter: " + e.getMessage());
        }
    }

    @Test
    void namesTheRuleAllowsWorkOnTheClientAndOnTheBackendsServices() throws Exception {
        String base = uniqueName("names");
        DiscoBackend.Owner owner = owner(10);
        for (String name : List.of(
                base + "/plain",
                base + "/with space",
                base + "/a.b-c_d:e@f",
                base + "/...",
                base + "/.hidden",
                base + "/ünïcödé-名前",
                base + "/zookeeper")) {
            FencedLock lock = disco.lock(name);
            assertTrue(lock.tryLock(SOON.toMillis(), TimeUnit.MILLISECONDS), name);
            lock.unlock();
            try (LockService service = owner.newLock(name)) {
                service.lock(SOON);
                service.unlock();
            }
            assertEquals(List.of(), keys(name), name);
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints()
                .forEach(c -> b.append(
                        c < 0x20 || c >= 0x7F && c <= 0x9F || c > 0xFFFF || c >= 0xE000 && c <= 0xF8FF || c >= 0xFFF0
                                ? String.format("\\u%04X", c)
                                : Character.toString(c)));
        return b.toString();
    }

    // ------------------------------------------------------------------ timeouts

    /** Runs {@code attempt}, which must give up at once with a {@link TimeoutException}. */
    private static void assertTimesOutAtOnce(String what, Executable attempt) {
        long t0 = System.nanoTime();
        assertThrows(TimeoutException.class, attempt, what);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < TRY_BOUND_MS, what + " tried once, at once: took " + ms + " ms");
    }

    /** {@code attempt} must still wait 300 ms after it started, then complete once {@code free} ran. */
    private static <T> T assertWaitsUntil(String what, Callable<T> attempt, Executable free) throws Throwable {
        CompletableFuture<T> waiting = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return attempt.call();
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                },
                THREADS);
        assertStillWaiting(waiting, what + " waits (a timeout too long for nanoseconds is no limit, not an overflow)");
        free.execute();
        return waiting.get(10, TimeUnit.SECONDS);
    }

    @Test
    void serviceTimeoutsOfZeroOrLessTryOnceAndHugeOnesWaitWithoutALimit() throws Throwable {
        DiscoBackend.Owner a = owner(10);
        DiscoBackend.Owner b = owner(10);

        String lockName = uniqueName("timeout-lock");
        LockService holder = a.newLock(lockName);
        LockService lock = b.newLock(lockName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            Grant g = lock.lock(now); // free: taken at once
            lock.unlock();
            assertTrue(g.token().value() > 0);
            try (Held<Grant> held = lock.hold(now)) {
                assertEquals(1, keys(lockName).size());
            }
        }
        Grant held = holder.lock(SOON);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("lock(" + now + ") while held elsewhere", () -> lock.lock(now));
            assertTimesOutAtOnce("hold(" + now + ") while held elsewhere", () -> lock.hold(now));
        }
        assertKeys(lockName, held.key());
        Grant later = assertWaitsUntil("lock(FOREVER)", () -> lock.lock(FOREVER), holder::unlock);
        assertTrue(later.token().isNewerThan(held.token()));
        lock.unlock();
        lock.hold(FOREVER).close();

        String rwName = uniqueName("timeout-rwlock");
        RWLockService writer = a.newRWLock(rwName);
        RWLockService rw = b.newRWLock(rwName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            rw.rLock(now);
            rw.rUnlock();
            rw.lock(now);
            rw.unlock();
            rw.holdRead(now).close();
            rw.holdWrite(now).close();
        }
        RWGrant w = writer.lock(SOON);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("rLock(" + now + ") while written", () -> rw.rLock(now));
            assertTimesOutAtOnce("lock(" + now + ") while written", () -> rw.lock(now));
            assertTimesOutAtOnce("holdRead(" + now + ") while written", () -> rw.holdRead(now));
        }
        assertKeys(rwName, w.key());
        assertWaitsUntil("rLock(FOREVER)", () -> rw.rLock(FOREVER), writer::unlock);
        rw.rUnlock();
        rw.lock(FOREVER);
        rw.unlock();

        String semName = uniqueName("timeout-semaphore");
        SemaphoreService first = a.newSemaphore(semName, 1);
        SemaphoreService second = b.newSemaphore(semName, 1);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            second.acquire(now);
            second.release();
            second.hold(now).close();
        }
        first.acquire(SOON);
        List<String> holding = keys(semName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("acquire(" + now + ") with no permit free", () -> second.acquire(now));
            assertTimesOutAtOnce("hold(" + now + ") with no permit free", () -> second.hold(now));
        }
        assertEquals(holding, keys(semName), "a try that found no permit free leaves no key");
        assertWaitsUntil("acquire(FOREVER)", () -> second.acquire(FOREVER), first::release);
        second.release();

        String electionName = uniqueName("timeout-election");
        ElectionService leader = a.newElection(electionName);
        ElectionService candidate = b.newElection(electionName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            Leadership l = candidate.campaign("b", now);
            assertEquals("b", l.value());
            candidate.resign();
            candidate.hold("b", now).close();
        }
        Leadership term = leader.campaign("a", SOON);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("campaign(" + now + ") while another leads", () -> candidate.campaign("b", now));
            assertTimesOutAtOnce("hold(" + now + ") while another leads", () -> candidate.hold("b", now));
        }
        assertKeys(electionName, term.key());
        Leadership next = assertWaitsUntil("campaign(FOREVER)", () -> candidate.campaign("b", FOREVER), leader::resign);
        assertTrue(next.token().isNewerThan(term.token()));
        candidate.resign();
        assertEquals(List.of(), keys(lockName));
        assertEquals(List.of(), keys(rwName));
        assertEquals(List.of(), keys(electionName));
    }

    @Test
    void clientTimeoutsOfZeroOrLessTryOnceAndHugeOnesWaitWithoutALimit() throws Throwable {
        String lockName = uniqueName("client-timeout-lock");
        FencedLock lock = disco.lock(lockName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTrue(lock.tryLock(now.toNanos(), TimeUnit.NANOSECONDS));
            lock.unlock();
            lock.hold(now).close();
        }
        FencedLock theirs = other.lock(lockName);
        theirs.lock();
        try {
            for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
                assertFalse(lock.tryLock(now.toNanos(), TimeUnit.NANOSECONDS));
                assertTimesOutAtOnce("hold(" + now + ") while held elsewhere", () -> lock.hold(now));
            }
            assertEquals(1, keys(lockName).size());
        } finally {
            theirs.unlock();
        }
        lock.hold(FOREVER).close();
        assertTrue(lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS));
        lock.unlock();
        theirs.lock();
        assertWaitsUntil(
                "hold(FOREVER)",
                () -> {
                    try (Held<FencedLock> h = lock.hold(FOREVER)) {
                        return h.token();
                    }
                },
                theirs::unlock);

        String rwName = uniqueName("client-timeout-rwlock");
        FencedReadWriteLock rw = disco.readWriteLock(rwName);
        FencedReadWriteLock theirRw = other.readWriteLock(rwName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            rw.readLock().hold(now).close();
            rw.writeLock().hold(now).close();
        }
        theirRw.writeLock().lock();
        try {
            for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
                assertFalse(rw.readLock().tryLock(now.toNanos(), TimeUnit.NANOSECONDS));
                assertTimesOutAtOnce(
                        "readLock().hold(" + now + ") while written",
                        () -> rw.readLock().hold(now));
                assertTimesOutAtOnce(
                        "writeLock().hold(" + now + ") while written",
                        () -> rw.writeLock().hold(now));
            }
        } finally {
            theirRw.writeLock().unlock();
        }
        rw.readLock().hold(FOREVER).close();
        rw.writeLock().hold(FOREVER).close();

        String semName = uniqueName("client-timeout-semaphore");
        FencedSemaphore semaphore = disco.semaphore(semName, 1);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            semaphore.release(semaphore.acquire(now));
            semaphore.hold(now).close();
        }
        FencedSemaphore theirSemaphore = other.semaphore(semName, 1);
        Permit theirs1 = theirSemaphore.acquire(SOON);
        List<String> holding = keys(semName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("acquire(" + now + ") with no permit free", () -> semaphore.acquire(now));
            assertTimesOutAtOnce("hold(" + now + ") with no permit free", () -> semaphore.hold(now));
        }
        assertEquals(holding, keys(semName), "a try that found no permit free leaves no key");
        Permit mine = assertWaitsUntil(
                "acquire(FOREVER)", () -> semaphore.acquire(FOREVER), () -> theirSemaphore.release(theirs1));
        semaphore.release(mine);

        String electionName = uniqueName("client-timeout-election");
        ElectionService mineElection = disco.election(electionName);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            mineElection.campaign("mine", now);
            mineElection.resign();
        }
        ElectionService theirElection = other.election(electionName);
        theirElection.campaign("theirs", SOON);
        for (Duration now : List.of(Duration.ZERO, NEGATIVE)) {
            assertTimesOutAtOnce("campaign(" + now + ") while another leads", () -> mineElection.campaign("mine", now));
        }
        assertEquals(1, keys(electionName).size());
        assertWaitsUntil("campaign(FOREVER)", () -> mineElection.campaign("mine", FOREVER), theirElection::resign);
        mineElection.resign();
        assertEquals(List.of(), keys(lockName));
        assertEquals(List.of(), keys(semName));
    }

    @Test
    void aBoundedCloseOfARunnerTakesZeroOrLessAsNoWaitAndAHugeBoundAsNoLimit() throws Exception {
        LeaderTask cooperative = term -> term.awaitEnd(Duration.ofMinutes(1));
        LeadershipRunner negative =
                runner(uniqueName("close-negative"), LeadershipRunner.Options.of("a", cooperative), 10);
        negative.close(NEGATIVE); // no wait: signals and answers
        Awaitility.await().pollInterval(Duration.ofMillis(20)).atMost(SOON).until(() -> negative.close(Duration.ZERO));
        LeadershipRunner forever =
                runner(uniqueName("close-forever"), LeadershipRunner.Options.of("b", cooperative), 10);
        assertTrue(forever.close(FOREVER), "waits until it stopped");
    }

    // ------------------------------------------------------------------ interruption

    /** {@code attempt}, on a thread interrupted on entry, throws InterruptedException and clears the status. */
    private static void assertInterruptedOnEntry(String what, Executable attempt) {
        Thread.currentThread().interrupt();
        try {
            assertThrows(InterruptedException.class, attempt, what);
            assertFalse(
                    Thread.currentThread().isInterrupted(),
                    what + ": the status is cleared, as java.util.concurrent does");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void anInterruptibleAcquisitionOnAnInterruptedThreadThrowsInterruptedExceptionAndChangesNothing() throws Exception {
        String sem = uniqueName("interrupted-semaphore");
        FencedSemaphore semaphore = disco.semaphore(sem, 2);
        assertInterruptedOnEntry("semaphore.acquire()", semaphore::acquire);
        assertInterruptedOnEntry("semaphore.acquire(timeout)", () -> semaphore.acquire(SOON));
        assertInterruptedOnEntry("semaphore.hold(timeout)", () -> semaphore.hold(SOON));
        assertEquals(List.of(), keys(sem));
        FencedSemaphore another = other.semaphore(sem, 3); // no limit was recorded: another one is free to
        another.release(another.acquire(SOON));

        String lockName = uniqueName("interrupted-lock");
        assertInterruptedOnEntry(
                "lock.lockInterruptibly()", () -> disco.lock(lockName).lockInterruptibly());
        assertInterruptedOnEntry(
                "lock.tryLock(time)", () -> disco.lock(lockName).tryLock(5, TimeUnit.SECONDS));
        assertInterruptedOnEntry(
                "lock.hold(timeout)", () -> disco.lock(lockName).hold(SOON));
        String rwName = uniqueName("interrupted-rwlock");
        assertInterruptedOnEntry(
                "readLock().lockInterruptibly()",
                () -> disco.readWriteLock(rwName).readLock().lockInterruptibly());
        assertInterruptedOnEntry(
                "writeLock().tryLock(time)",
                () -> disco.readWriteLock(rwName).writeLock().tryLock(5, TimeUnit.SECONDS));
        String electionName = uniqueName("interrupted-election");
        assertInterruptedOnEntry(
                "election.campaign(value)", () -> disco.election(electionName).campaign("v"));

        DiscoBackend.Owner owner = owner(10);
        LockService service = owner.newLock(uniqueName("interrupted-lock-service"));
        assertInterruptedOnEntry("service.lock()", service::lock);
        assertInterruptedOnEntry("service.lock(timeout)", () -> service.lock(SOON));
        RWLockService rwService = owner.newRWLock(uniqueName("interrupted-rw-service"));
        assertInterruptedOnEntry("service.rLock()", rwService::rLock);
        assertInterruptedOnEntry("service.lock(timeout)", () -> rwService.lock(SOON));
        SemaphoreService semService = owner.newSemaphore(uniqueName("interrupted-semaphore-service"), 1);
        assertInterruptedOnEntry("service.acquire()", semService::acquire);
        assertInterruptedOnEntry("service.acquire(timeout)", () -> semService.acquire(SOON));
        ElectionService electionService = owner.newElection(uniqueName("interrupted-election-service"));
        assertInterruptedOnEntry("service.campaign(value)", () -> electionService.campaign("v"));
        assertInterruptedOnEntry("service.campaign(value, timeout)", () -> electionService.campaign("v", SOON));

        assertEquals(List.of(), keys(lockName));
        assertEquals(List.of(), keys(rwName));
        assertEquals(List.of(), keys(electionName));
        assertTrue(
                service.held().isEmpty()
                        && rwService.held().isEmpty()
                        && semService.held().isEmpty()
                        && electionService.held().isEmpty(),
                "nothing held");
    }

    @Test
    void aTryOnAnInterruptedThreadStillTriesAndKeepsTheStatus() throws Exception {
        String sem = uniqueName("interrupted-try-semaphore");
        Thread.currentThread().interrupt();
        try {
            Permit p = disco.semaphore(sem, 2).tryAcquire().orElseThrow(() -> new AssertionError("a free permit"));
            assertTrue(Thread.currentThread().isInterrupted(), "a try is not interruptible: the status is kept");
            disco.semaphore(sem, 2).release(p);
            FencedLock lock = disco.lock(uniqueName("interrupted-try-lock"));
            assertTrue(lock.tryLock());
            lock.unlock();
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    // ------------------------------------------------------------------ status

    @Test
    void theStatusTellsAPositiveValidityNoLongerThanTheTtlWhileUp() throws Exception {
        Disco d = client(2); // short: several renewals within the test
        AtomicReference<Duration> last = new AtomicReference<>(Duration.ZERO);
        AtomicInteger rises = new AtomicInteger();
        // Every status read while UP is checked, until the validity has risen three times: the first reading, then
        // two renewals (a fault would fail an assertion at once, or stop the renewals and time out).
        Awaitility.await()
                .pollInterval(Duration.ofMillis(50))
                .atMost(Duration.ofSeconds(10))
                .until(() -> {
                    DiscoStatus s = d.status();
                    if (s.state() == DiscoStatus.State.UP) {
                        assertTrue(s.owner().isPresent(), s.toString());
                        assertTrue(s.ttl().compareTo(Duration.ZERO) > 0, "a positive ttl: " + s);
                        assertTrue(
                                s.remainingValidity().compareTo(Duration.ZERO) > 0,
                                "a positive validity while UP: " + s);
                        assertTrue(s.remainingValidity().compareTo(s.ttl()) <= 0, "no longer than the ttl: " + s);
                        if (s.remainingValidity().compareTo(last.getAndSet(s.remainingValidity())) > 0) {
                            rises.incrementAndGet();
                        }
                    }
                    return rises.get() >= 3;
                });
        d.close();
        DiscoStatus closed = d.status();
        assertEquals(DiscoStatus.State.CLOSED, closed.state());
        assertEquals(Duration.ZERO, closed.remainingValidity());
    }
}
