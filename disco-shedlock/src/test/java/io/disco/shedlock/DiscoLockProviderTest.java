package io.disco.shedlock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.lock.LockLostException;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import net.javacrumbs.shedlock.support.ShortKeepAlive;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The provider's contract against real etcd, two instances (each its own jetcd client, disco client and
 * lease): lockAtLeastFor keeps the key after unlock, lockAtMostFor releases it and makes the token stale,
 * extension through {@link LockExtender} and {@link KeepAliveLockProvider} keeps the lock past the first
 * lockAtMostFor with the same token.
 */
class DiscoLockProviderTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private Client clientA;
    private Client clientB;
    private Disco discoA;
    private Disco discoB;
    private DiscoLockProvider a;
    private DiscoLockProvider b;

    @BeforeEach
    void start() {
        String prefix = EtcdClaims.uniquePrefix("shedlock");
        clientA = EtcdClaims.client(ETCD.cluster());
        clientB = EtcdClaims.client(ETCD.cluster());
        discoA = Etcd.disco(clientA);
        discoB = Etcd.disco(clientB);
        a = new DiscoLockProvider(discoA, prefix);
        b = new DiscoLockProvider(discoB, prefix);
    }

    @AfterEach
    void stop() {
        a.close();
        b.close();
        discoA.close();
        discoB.close();
        clientA.close();
        clientB.close();
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    @Test
    void aHeldNameIsNotLockedByAnotherInstanceNorAnotherThread() throws Exception {
        SimpleLock held =
                a.lock(config("job", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        FencingToken first = SchedulerLockToken.current();
        assertTrue(b.lock(config("job", Duration.ofSeconds(5), Duration.ZERO)).isEmpty(), "another instance");
        assertTrue(
                CompletableFuture.supplyAsync(() -> a.lock(config("job", Duration.ofSeconds(5), Duration.ZERO)))
                        .get()
                        .isEmpty(),
                "another thread of the same instance");
        held.unlock();
        assertTrue(SchedulerLockToken.find().isEmpty(), "no run after the unlock");
        assertThrows(IllegalStateException.class, SchedulerLockToken::current);

        SimpleLock next =
                b.lock(config("job", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        assertTrue(SchedulerLockToken.current().isNewerThan(first));
        next.unlock();
    }

    /** Asks {@code provider} for the lock of {@code config} every 50 ms (on this thread) until it is given, within 5 s. */
    private static SimpleLock awaitLock(DiscoLockProvider provider, LockConfiguration config) {
        AtomicReference<SimpleLock> lock = new AtomicReference<>();
        await().pollInSameThread()
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> provider.lock(config)
                        .map(l -> {
                            lock.set(l);
                            return true;
                        })
                        .orElse(false));
        return lock.get();
    }

    @Test
    void lockAtLeastForKeepsTheKeyAfterUnlockUntilItEnds() {
        long start = System.nanoTime();
        SimpleLock held = a.lock(config("atleast", Duration.ofSeconds(5), Duration.ofMillis(1500)))
                .orElseThrow();
        held.unlock();
        assertTrue(System.nanoTime() - start < Duration.ofMillis(1000).toNanos(), "unlock returned at once");
        assertTrue(
                b.lock(config("atleast", Duration.ofSeconds(5), Duration.ZERO)).isEmpty(), "kept after unlock");
        SimpleLock other = awaitLock(b, config("atleast", Duration.ofSeconds(5), Duration.ZERO));
        long afterMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertTrue(afterMs >= 1500, "released at lockAtLeastFor, not before: " + afterMs + " ms");
        other.unlock();
    }

    @Test
    void lockAtMostForReleasesTheLockAndMakesTheRunsTokenStale() {
        SimpleLock held =
                a.lock(config("atmost", Duration.ofMillis(600), Duration.ZERO)).orElseThrow();
        FencingToken stale = SchedulerLockToken.current();
        SimpleLock other = awaitLock(b, config("atmost", Duration.ofSeconds(5), Duration.ZERO));
        FencingToken next = SchedulerLockToken.current(); // b's run, on this thread, innermost
        assertTrue(next.isNewerThan(stale));
        other.unlock();
        assertThrows(LockLostException.class, SchedulerLockToken::current, "a's run: held past lockAtMostFor");
        assertTrue(SchedulerLockToken.find().isEmpty());
        held.unlock(); // logged, not thrown: the run is over either way
        assertThrows(IllegalStateException.class, SchedulerLockToken::current);
    }

    @Test
    void lockExtenderKeepsTheLockPastItsFirstLockAtMostForWithTheSameToken() {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(a);
        AtomicReference<FencingToken> before = new AtomicReference<>();
        AtomicReference<FencingToken> after = new AtomicReference<>();
        executor.executeWithLock(
                (Runnable) () -> {
                    before.set(SchedulerLockToken.current());
                    LockExtender.extendActiveLock(Duration.ofSeconds(3), Duration.ZERO);
                    // past the first lockAtMostFor (500 ms), b stays locked out
                    await().pollInSameThread()
                            .during(Duration.ofMillis(1000))
                            .atMost(Duration.ofSeconds(3))
                            .pollInterval(Duration.ofMillis(100))
                            .until(() -> b.lock(config("extended", Duration.ofSeconds(5), Duration.ZERO))
                                    .isEmpty());
                    after.set(SchedulerLockToken.current());
                },
                config("extended", Duration.ofMillis(500), Duration.ZERO));
        assertEquals(before.get(), after.get());
        SimpleLock next =
                b.lock(config("extended", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
        assertTrue(SchedulerLockToken.current().isNewerThan(after.get()));
        next.unlock();
    }

    @Test
    void keepAliveLockProviderExtendsFromItsOwnThread() {
        ScheduledExecutorService keepAliveThread = Executors.newSingleThreadScheduledExecutor();
        try {
            KeepAliveLockProvider keepAlive = ShortKeepAlive.of(a, keepAliveThread, Duration.ofMillis(100));
            Optional<SimpleLock> held = keepAlive.lock(config("kept", Duration.ofMillis(400), Duration.ZERO));
            assertTrue(held.isPresent());
            FencingToken token = SchedulerLockToken.current();
            // three times lockAtMostFor: extended every 200 ms by the keep-alive thread
            await().pollInSameThread()
                    .during(Duration.ofMillis(1200))
                    .atMost(Duration.ofSeconds(4))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> b.lock(config("kept", Duration.ofSeconds(5), Duration.ZERO))
                            .isEmpty());
            assertEquals(token, SchedulerLockToken.current(), "still valid, same token");
            held.get().unlock();
            assertFalse(SchedulerLockToken.find().isPresent());
            SimpleLock next =
                    b.lock(config("kept", Duration.ofSeconds(5), Duration.ZERO)).orElseThrow();
            next.unlock();
        } finally {
            keepAliveThread.shutdownNow();
        }
    }
}
