package io.disco.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.AcquisitionObserver;
import io.disco.client.Disco;
import io.disco.client.DiscoBackend;
import io.disco.client.DiscoOptions;
import io.disco.client.FencedReadWriteLock;
import io.disco.client.FencedSemaphore;
import io.disco.client.TestableBackend;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.fencing.FencingToken;
import io.disco.fencing.Held;
import io.disco.lock.FencedHold;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.ObservationContextAssert;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's acquisitions and holds as Micrometer observations ({@link DiscoObservations}), on a real backend (a
 * subclass names it: etcd, ZooKeeper), recorded by Micrometer's {@link TestObservationRegistry} (which also fails an
 * observation stopped twice or with another set of low-cardinality keys) and a handler that notes where each stops.
 */
abstract class ObservationsTests {

    /** The backend of the subclass: its test hooks end owners and delete keys. */
    abstract TestableBackend backend();

    /** Notes every disco observation started, and each stop with its thread. */
    static final class Recorder implements ObservationHandler<Observation.Context> {
        final List<DiscoObservationContext> started = new CopyOnWriteArrayList<>();
        final Map<Observation.Context, List<Thread>> stops = new ConcurrentHashMap<>();

        @Override
        public void onStart(Observation.Context context) {
            started.add((DiscoObservationContext) context);
        }

        @Override
        public void onStop(Observation.Context context) {
            stops.computeIfAbsent(context, k -> new CopyOnWriteArrayList<>()).add(Thread.currentThread());
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof DiscoObservationContext;
        }

        /** @return the observations named {@code observation} ({@code disco.wait}, {@code disco.hold}) of {@code name} */
        List<DiscoObservationContext> of(String observation, String name) {
            List<DiscoObservationContext> out = new ArrayList<>();
            for (DiscoObservationContext c : started) {
                if (c.getName().equals(observation) && c.primitiveName().equals(name)) {
                    out.add(c);
                }
            }
            return out;
        }

        /** @return the only observation named {@code observation} of {@code name} */
        DiscoObservationContext only(String observation, String name) {
            List<DiscoObservationContext> all = of(observation, name);
            assertEquals(1, all.size(), observation + " of " + name + ": " + all);
            return all.get(0);
        }

        boolean stopped(Observation.Context context) {
            return stops.containsKey(context);
        }

        /** @return the one thread {@code context} was stopped on (it was stopped once) */
        Thread stoppedOn(Observation.Context context) {
            List<Thread> threads = stops.get(context);
            assertEquals(1, threads == null ? 0 : threads.size(), "stops of " + context);
            return threads.get(0);
        }
    }

    /**
     * {@link DiscoObservations}, and what it threw: the client logs and ignores an observer's exception, so the
     * registry's own checks (an observation stopped twice, an error after its stop) would go unseen without this.
     */
    static final class Checked implements AcquisitionObserver {
        final List<Throwable> thrown = new CopyOnWriteArrayList<>();
        private final AcquisitionObserver observations;

        Checked(AcquisitionObserver observations) {
            this.observations = observations;
        }

        private <T> T checked(java.util.function.Supplier<T> call) {
            try {
                return call.get();
            } catch (RuntimeException | Error e) {
                thrown.add(e);
                throw e;
            }
        }

        @Override
        public Attempt started(Kind kind, String name) {
            Attempt attempt = checked(() -> observations.started(kind, name));
            return new Attempt() {
                @Override
                public Hold granted(io.disco.fencing.Fenced grant) {
                    Hold hold = checked(() -> attempt.granted(grant));
                    return new Hold() {
                        @Override
                        public void released() {
                            checked(() -> {
                                hold.released();
                                return null;
                            });
                        }

                        @Override
                        public void lost(Throwable cause) {
                            checked(() -> {
                                hold.lost(cause);
                                return null;
                            });
                        }
                    };
                }

                @Override
                public void ended(Outcome outcome, Throwable cause) {
                    checked(() -> {
                        attempt.ended(outcome, cause);
                        return null;
                    });
                }
            };
        }
    }

    TestObservationRegistry registry;
    Recorder recorder;
    Disco disco;
    private final List<Checked> checked = new ArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void client() {
        registry = TestObservationRegistry.create();
        recorder = new Recorder();
        registry.observationConfig().observationHandler(recorder);
        disco = track(Disco.over(
                backend(),
                DiscoOptions.builder()
                        .observer(checked(DiscoObservations.of(registry)))
                        .build()));
    }

    /** @return {@code observations}, whose exceptions fail the test */
    AcquisitionObserver checked(AcquisitionObserver observations) {
        Checked c = new Checked(observations);
        checked.add(c);
        return c;
    }

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        closing.clear();
        for (Checked c : checked) {
            assertEquals(List.of(), c.thrown, "what the observations threw");
        }
    }

    <T extends AutoCloseable> T track(T closeable) {
        closing.add(closeable);
        return closeable;
    }

    static String name() {
        return "/test/observations/" + UUID.randomUUID();
    }

    /** A request's observation, current on this thread while {@code work} runs. */
    Observation request(ThrowingRunnable work) throws Exception {
        Observation request = Observation.start("request", registry);
        try (Observation.Scope ignored = request.openScope()) {
            work.run();
        } finally {
            request.stop();
        }
        return request;
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aLockWaitIsAChildOfTheRequestAndItsHoldCarriesTheTokenUntilTheUnlock() throws Exception {
        String name = name();
        FencedLock lock = disco.lock(name);
        AtomicReference<FencingToken> token = new AtomicReference<>();
        AtomicReference<String> key = new AtomicReference<>();
        Observation request = request(() -> {
            lock.lock();
            try {
                token.set(lock.token());
                key.set(disco.holdings().get(0).key().orElseThrow());
                DiscoObservationContext hold = recorder.only("disco.hold", name);
                assertFalse(recorder.stopped(hold), "the hold lasts while the lock is held");
                assertTrue(recorder.stopped(recorder.only("disco.wait", name)), "the wait ended at the grant");
                lock.lock(); // reentrant: holds nothing new, so no observation
                lock.unlock();
            } finally {
                lock.unlock();
            }
            assertTrue(
                    recorder.stopped(recorder.only("disco.hold", name)), "stopped by the unlock, before it returned");
        });

        DiscoObservationContext wait = recorder.only("disco.wait", name);
        ObservationContextAssert.assertThat(wait)
                .hasNameEqualTo("disco.wait")
                .hasContextualNameEqualTo("lock wait")
                .hasParentObservationEqualTo(request)
                .hasLowCardinalityKeyValue("disco.primitive", "lock")
                .hasLowCardinalityKeyValue("disco.outcome", "acquired")
                .hasHighCardinalityKeyValue("disco.name", name)
                .hasHighCardinalityKeyValue("disco.token", token.get().toString())
                .hasHighCardinalityKeyValue("disco.key", key.get())
                .doesNotHaveError();
        DiscoObservationContext hold = recorder.only("disco.hold", name);
        ObservationContextAssert.assertThat(hold)
                .hasContextualNameEqualTo("lock hold")
                .hasParentObservationEqualTo(request)
                .hasLowCardinalityKeyValue("disco.primitive", "lock")
                .hasLowCardinalityKeyValue("disco.outcome", "released")
                .hasHighCardinalityKeyValue("disco.token", token.get().toString())
                .hasHighCardinalityKeyValue("disco.key", key.get())
                .doesNotHaveError();
        assertEquals(Thread.currentThread(), recorder.stoppedOn(hold), "released on the unlocking thread");
        assertEquals(token.get(), hold.token().orElseThrow());
    }

    @Test
    void aWaitEndsBusyTimedOutInterruptedOrFailed() throws Exception {
        String name = name();
        try (DiscoBackend.Owner other = backend().open(); // another process
                LockService taken = other.newLock(name)) {
            taken.lock(); // another process holds it
            FencedLock lock = disco.lock(name);

            assertFalse(lock.tryLock());
            assertFalse(lock.tryLock(200, TimeUnit.MILLISECONDS));
            CountDownLatch waiting = new CountDownLatch(1);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = new Thread(() -> {
                waiting.countDown();
                try {
                    lock.lockInterruptibly();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            waiting.await();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> recorder.of("disco.wait", name).size() == 3);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() ->
                            disco.holdings().stream().anyMatch(h -> h.name().equals(name)));
            t.interrupt();
            t.join(10_000);
            assertTrue(thrown.get() instanceof InterruptedException, String.valueOf(thrown.get()));

            List<DiscoObservationContext> waits = recorder.of("disco.wait", name);
            ObservationContextAssert.assertThat(waits.get(0))
                    .hasLowCardinalityKeyValue("disco.outcome", "busy")
                    .doesNotHaveError()
                    .doesNotHaveHighCardinalityKeyValueWithKey("disco.token");
            assertTrue(waits.get(0).token().isEmpty());
            ObservationContextAssert.assertThat(waits.get(1)).hasLowCardinalityKeyValue("disco.outcome", "timed_out");
            ObservationContextAssert.assertThat(waits.get(2)).hasLowCardinalityKeyValue("disco.outcome", "interrupted");
            assertEquals(List.of(), recorder.of("disco.hold", name), "nothing was held");
            waits.forEach(recorder::stoppedOn);
        }

        FencedLock outer = disco.lock(name);
        outer.lock();
        try {
            String nested = name + "/nested";
            IllegalStateException refused = assertThrows(
                    IllegalStateException.class, () -> disco.lock(nested).tryLock());
            ObservationContextAssert.assertThat(recorder.only("disco.wait", nested))
                    .hasLowCardinalityKeyValue("disco.outcome", "failed")
                    .hasError(refused);
        } finally {
            outer.unlock();
        }
    }

    @Test
    void readAndWriteLocksPermitsAndLeadershipsCarryTheirOwnTokens() throws Exception {
        String rw = name();
        String sem = name();
        String election = name();
        FencedReadWriteLock rwLock = disco.readWriteLock(rw);
        FencedSemaphore semaphore = disco.semaphore(sem, 2);
        AtomicReference<FencingToken> read = new AtomicReference<>();
        AtomicReference<FencingToken> write = new AtomicReference<>();
        AtomicReference<Permit> permit = new AtomicReference<>();
        AtomicReference<Leadership> leadership = new AtomicReference<>();
        Observation request = request(() -> {
            rwLock.readLock().lock();
            read.set(rwLock.readLock().token());
            assertHeld(rw, 0);
            rwLock.readLock().unlock();
            rwLock.writeLock().lock();
            write.set(rwLock.writeLock().token());
            assertHeld(rw, 1);
            rwLock.writeLock().unlock();
            permit.set(semaphore.acquire(Duration.ofSeconds(10)));
            assertHeld(sem, 0);
            semaphore.release(permit.get());
            try (ElectionService candidate = disco.election(election)) {
                leadership.set(candidate.campaign("me"));
                candidate.campaign("me"); // leads already: no new observation
                assertHeld(election, 0);
                candidate.resign();
            }
        });

        List<DiscoObservationContext> waits = recorder.of("disco.wait", rw);
        List<DiscoObservationContext> holds = recorder.of("disco.hold", rw);
        assertEquals(2, waits.size());
        assertEquals(2, holds.size());
        ObservationContextAssert.assertThat(holds.get(0))
                .hasContextualNameEqualTo("rwlock.read hold")
                .hasLowCardinalityKeyValue("disco.primitive", "rwlock.read")
                .hasLowCardinalityKeyValue("disco.outcome", "released")
                .hasHighCardinalityKeyValue("disco.token", read.get().toString())
                .hasParentObservationEqualTo(request);
        ObservationContextAssert.assertThat(holds.get(1))
                .hasLowCardinalityKeyValue("disco.primitive", "rwlock.write")
                .hasLowCardinalityKeyValue("disco.outcome", "released")
                .hasHighCardinalityKeyValue("disco.token", write.get().toString());
        ObservationContextAssert.assertThat(waits.get(1))
                .hasLowCardinalityKeyValue("disco.primitive", "rwlock.write")
                .hasHighCardinalityKeyValue("disco.token", write.get().toString());

        ObservationContextAssert.assertThat(recorder.only("disco.hold", sem))
                .hasLowCardinalityKeyValue("disco.primitive", "semaphore")
                .hasLowCardinalityKeyValue("disco.outcome", "released")
                .hasHighCardinalityKeyValue("disco.token", permit.get().token().toString())
                .hasHighCardinalityKeyValue(
                        "disco.slot", Integer.toString(permit.get().slot()))
                .hasHighCardinalityKeyValue("disco.key", permit.get().key())
                .hasParentObservationEqualTo(request);
        ObservationContextAssert.assertThat(recorder.only("disco.wait", sem))
                .hasLowCardinalityKeyValue("disco.outcome", "acquired")
                .hasHighCardinalityKeyValue("disco.token", permit.get().token().toString());

        ObservationContextAssert.assertThat(recorder.only("disco.wait", election))
                .hasContextualNameEqualTo("election wait")
                .hasLowCardinalityKeyValue("disco.outcome", "acquired")
                .hasParentObservationEqualTo(request);
        DiscoObservationContext term = recorder.only("disco.hold", election);
        ObservationContextAssert.assertThat(term)
                .hasLowCardinalityKeyValue("disco.primitive", "election")
                .hasLowCardinalityKeyValue("disco.outcome", "released")
                .hasHighCardinalityKeyValue(
                        "disco.token", leadership.get().token().toString())
                .hasHighCardinalityKeyValue("disco.key", leadership.get().key());
        recorder.stoppedOn(term);
    }

    /** The {@code index}th hold of {@code name} has started and not stopped. */
    private void assertHeld(String name, int index) {
        List<DiscoObservationContext> holds = recorder.of("disco.hold", name);
        assertTrue(holds.size() > index, "holds of " + name + ": " + holds);
        assertFalse(recorder.stopped(holds.get(index)), "the hold lasts while held");
    }

    @Test
    void aHoldWhoseKeyIsDeletedIsLostOffTheBackendsThreads() throws Exception {
        String name = name();
        FencedLock lock = disco.lock(name);
        lock.lock();
        try {
            FencingToken token = lock.token();
            DiscoObservationContext hold = recorder.only("disco.hold", name);
            backend().deleteKey(disco.holdings().get(0).key().orElseThrow()); // an operator's etcdctl del
            Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> recorder.stopped(hold));
            ObservationContextAssert.assertThat(hold)
                    .hasLowCardinalityKeyValue("disco.outcome", "lost")
                    .hasHighCardinalityKeyValue("disco.token", token.toString())
                    .assertThatError()
                    .isInstanceOf(LockLostException.class);
            Thread stopper = recorder.stoppedOn(hold);
            assertFalse(backend().isBackendThread(stopper), "stopped on " + stopper.getName());
        } finally {
            assertThrows(LockLostException.class, lock::unlock);
        }
        recorder.stoppedOn(recorder.only("disco.hold", name)); // the unlock that reported the loss stopped nothing
    }

    @Test
    void everyHoldOfAnOwnerEndedFromOutsideIsLost() throws Exception {
        String lockName = name();
        String semName = name();
        FencedLock lock = disco.lock(lockName);
        FencedSemaphore semaphore = disco.semaphore(semName, 3);
        lock.lock();
        Permit permit = semaphore.acquire(Duration.ofSeconds(10));
        try {
            backend().endOwnerOf(disco.holdings().get(0).key().orElseThrow()); // etcdctl lease revoke, a session expiry
            DiscoObservationContext lockHold = recorder.only("disco.hold", lockName);
            DiscoObservationContext permitHold = recorder.only("disco.hold", semName);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> recorder.stopped(lockHold) && recorder.stopped(permitHold));
            for (DiscoObservationContext hold : List.of(lockHold, permitHold)) {
                ObservationContextAssert.assertThat(hold)
                        .hasLowCardinalityKeyValue("disco.outcome", "lost")
                        .hasError();
                Thread stopper = recorder.stoppedOn(hold);
                assertFalse(backend().isBackendThread(stopper), "stopped on " + stopper.getName());
            }
        } finally {
            assertThrows(RuntimeException.class, lock::unlock);
            assertThrows(RuntimeException.class, () -> semaphore.release(permit));
        }
        // the client claims again through its new owner: observed as before
        assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
        lock.unlock();
        List<DiscoObservationContext> holds = recorder.of("disco.hold", lockName);
        assertEquals(2, holds.size());
        ObservationContextAssert.assertThat(holds.get(1)).hasLowCardinalityKeyValue("disco.outcome", "released");
    }

    @Test
    void aHoldPastItsMaximumHoldTimeIsLost() throws Exception {
        String name = name();
        FencedLock lock = disco.lock(name).withMaxHold(Duration.ofMillis(300));
        lock.lock();
        DiscoObservationContext hold = recorder.only("disco.hold", name);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> recorder.stopped(hold));
        ObservationContextAssert.assertThat(hold)
                .hasLowCardinalityKeyValue("disco.outcome", "lost")
                .assertThatError()
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("maximum hold time");
        assertThrows(LockLostException.class, lock::unlock);
        recorder.stoppedOn(hold);
    }

    @Test
    void asynchronousAcquisitionsAreChildrenOfTheRequestThatAskedForThem() throws Exception {
        String lockName = name();
        String semName = name();
        String election = name();
        FencedSemaphore semaphore = disco.semaphore(semName, 1);
        List<CompletableFuture<?>> asked = new ArrayList<>();
        ElectionService candidate = track(disco.election(election));
        Observation request = request(() -> {
            asked.add(disco.lock(lockName).lockAsync());
            asked.add(semaphore.acquireAsync());
            asked.add(candidate.campaignAsync("me"));
        });
        @SuppressWarnings("unchecked")
        Held<FencedHold> held = (Held<FencedHold>) asked.get(0).get(10, TimeUnit.SECONDS);
        Permit permit = (Permit) asked.get(1).get(10, TimeUnit.SECONDS);
        Leadership leadership = (Leadership) asked.get(2).get(10, TimeUnit.SECONDS);
        FencingToken lockToken = held.token();
        held.close();
        semaphore.release(permit);
        candidate.resign();

        for (String name : List.of(lockName, semName, election)) {
            ObservationContextAssert.assertThat(recorder.only("disco.wait", name))
                    .hasParentObservationEqualTo(request)
                    .hasLowCardinalityKeyValue("disco.outcome", "acquired");
            DiscoObservationContext hold = recorder.only("disco.hold", name);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> recorder.stopped(hold));
            ObservationContextAssert.assertThat(hold)
                    .hasParentObservationEqualTo(request)
                    .hasLowCardinalityKeyValue("disco.outcome", "released");
        }
        ObservationContextAssert.assertThat(recorder.only("disco.hold", lockName))
                .hasHighCardinalityKeyValue("disco.token", lockToken.toString());
        ObservationContextAssert.assertThat(recorder.only("disco.hold", semName))
                .hasHighCardinalityKeyValue("disco.token", permit.token().toString());
        ObservationContextAssert.assertThat(recorder.only("disco.hold", election))
                .hasHighCardinalityKeyValue("disco.token", leadership.token().toString());
    }

    @Test
    void aCancelledAsynchronousAcquisitionEndsCancelled() throws Exception {
        String lockName = name();
        String semName = name();
        FencedLock lock = disco.lock(lockName);
        FencedSemaphore semaphore = disco.semaphore(semName, 1);
        try (DiscoBackend.Owner other = backend().open(); // another process, holding the lock and the one permit
                LockService taken = other.newLock(lockName);
                SemaphoreService permits = other.newSemaphore(semName, 1)) {
            taken.lock();
            permits.acquire();
            CompletableFuture<Held<FencedHold>> pendingLock = lock.lockAsync();
            CompletableFuture<Permit> pendingPermit = semaphore.acquireAsync();
            assertTrue(pendingLock.cancel(true));
            assertTrue(pendingPermit.cancel(true));
            assertThrows(CancellationException.class, pendingLock::join);
            for (String name : List.of(lockName, semName)) {
                DiscoObservationContext wait = recorder.only("disco.wait", name);
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> recorder.stopped(wait));
                ObservationContextAssert.assertThat(wait)
                        .hasLowCardinalityKeyValue("disco.outcome", "cancelled")
                        .doesNotHaveError();
            }
            assertEquals(List.of(), recorder.of("disco.hold", lockName));
            assertEquals(List.of(), recorder.of("disco.hold", semName));
        }
    }

    @Test
    void aClientWithoutObserversRecordsNothing() throws Exception {
        Disco plain = track(Disco.over(backend()));
        String name = name();
        request(() -> {
            FencedLock lock = plain.lock(name);
            lock.lock();
            lock.unlock();
            Permit p = plain.semaphore(name + "-s", 1).acquire(Duration.ofSeconds(10));
            plain.semaphore(name + "-s", 1).release(p);
        });
        assertEquals(List.of(), recorder.started, "the request's observation only");
        registry.assertThat().hasNumberOfObservationsEqualTo(1).hasObservationWithNameEqualTo("request");
        assertEquals(List.of(), DiscoOptions.defaults().observers());
    }

    @Test
    void aConventionMayMakeTheNameLowCardinality() throws Exception {
        class NamedWaits extends DefaultDiscoWaitObservationConvention {
            @Override
            public KeyValues getLowCardinalityKeyValues(DiscoWaitContext context) {
                return super.getLowCardinalityKeyValues(context).and("disco.name", context.primitiveName());
            }
        }
        Disco named = track(Disco.over(
                backend(),
                DiscoOptions.builder()
                        .observer(checked(DiscoObservations.of(registry).withWaitConvention(new NamedWaits())))
                        .build()));
        String name = name();
        FencedLock lock = named.lock(name);
        lock.lock();
        lock.unlock();
        ObservationContextAssert.assertThat(recorder.only("disco.wait", name))
                .hasLowCardinalityKeyValue("disco.name", name);
        ObservationContextAssert.assertThat(recorder.only("disco.hold", name))
                .doesNotHaveLowCardinalityKeyValue("disco.name", name);
    }

    @Test
    void anObserverThatThrowsFailsNoAcquisition() throws Exception {
        AcquisitionObserver broken = (kind, name) -> {
            throw new IllegalStateException("observer bug");
        };
        AcquisitionObserver brokenLater = (kind, name) -> new AcquisitionObserver.Attempt() {
            @Override
            public AcquisitionObserver.Hold granted(io.disco.fencing.Fenced grant) {
                throw new IllegalStateException("observer bug at the grant");
            }

            @Override
            public void ended(AcquisitionObserver.Outcome outcome, Throwable cause) {
                throw new IllegalStateException("observer bug at the end");
            }
        };
        Disco client = track(Disco.over(
                backend(),
                DiscoOptions.builder()
                        .observer(broken)
                        .observer(brokenLater)
                        .observer(checked(DiscoObservations.of(registry)))
                        .build()));
        String name = name();
        FencedLock lock = client.lock(name);
        assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
        lock.unlock();
        ObservationContextAssert.assertThat(recorder.only("disco.hold", name))
                .hasLowCardinalityKeyValue("disco.outcome", "released");
    }
}
