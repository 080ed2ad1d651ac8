package io.disco.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.lock.LockLostException;
import io.disco.testservers.EtcdClaims;
import io.disco.testservers.EtcdExtension;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * The registry against real etcd: tokens, exclusion across clients, executeLocked, loss, expiry, renewal; and, nested,
 * where it takes the place of one of Spring's registries.
 */
class DiscoLockRegistryTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    @RegisterExtension
    static final OtherThread OTHER = new OtherThread();

    /** A name no other test uses: the prefix of the test's registry. */
    private String prefix;
    /** The client the test's registry is on. */
    private Disco disco;
    /** The registry under test, on {@link #prefix}. */
    private DiscoLockRegistry registry;

    @BeforeEach
    void open() {
        prefix = EtcdClaims.uniquePrefix("registry");
        disco = Etcd.disco(ETCD.client());
        registry = new DiscoLockRegistry(disco, prefix);
    }

    @AfterEach
    void close() {
        disco.close();
    }

    @Test
    void obtainGivesOnePerThreadReentrantLockWithItsToken() throws Exception {
        try (Disco disco2 = Etcd.disco(ETCD.client())) {
            assertInstanceOf(ExpirableLockRegistry.class, registry);
            assertInstanceOf(RenewableLockRegistry.class, registry);
            DiscoLock lock = registry.obtain("orders/42");
            assertSame(lock, registry.obtain("orders/42"));
            assertEquals("orders/42", lock.key());

            lock.lock();
            FencingToken first = lock.token();
            assertTrue(lock.tryLock(), "reentrant");
            assertEquals(first, lock.token(), "one token for nested holds");
            assertEquals(
                    1, EtcdClaims.claims(ETCD.client(), prefix + "/orders%2F42").size(), "the key escaped, one claim");
            boolean otherThread = OTHER.call(() -> lock.tryLock());
            assertFalse(otherThread, "another thread of this process waits");
            DiscoLockRegistry theirs = new DiscoLockRegistry(disco2, prefix);
            boolean otherProcess = OTHER.call(() -> theirs.obtain("orders/42").tryLock(200, TimeUnit.MILLISECONDS));
            assertFalse(otherProcess, "another process waits");
            lock.unlock();
            lock.unlock();

            FencingToken second = OTHER.call(() -> {
                DiscoLock l = theirs.obtain("orders/42");
                l.lock();
                try {
                    return l.token();
                } finally {
                    l.unlock();
                }
            });
            assertTrue(second.isNewerThan(first), first + " then " + second);
            assertThrows(
                    IllegalMonitorStateException.class,
                    lock::unlock,
                    "not held: as java.util.concurrent.locks.Lock says");
            assertThrows(IllegalArgumentException.class, () -> registry.obtain(" "));
            assertThrows(IllegalArgumentException.class, () -> registry.obtain(42));
            assertThrows(NullPointerException.class, () -> registry.obtain(null));
        }
    }

    @Test
    void executeLockedRunsUnderTheLockAndTimesOut() throws Exception {
        try (Disco disco2 = Etcd.disco(ETCD.client())) {
            FencingToken inside = registry.executeLocked("job", () -> {
                assertTrue(registry.obtain("job").isHeldByCurrentThread());
                return registry.obtain("job").token();
            });
            assertFalse(registry.obtain("job").isHeldByCurrentThread(), "released after the task");

            DiscoLockRegistry theirs = new DiscoLockRegistry(disco2, prefix);
            DiscoLock held = theirs.obtain("job");
            OTHER.call(() -> {
                held.lock();
                return null;
            });
            assertThrows(TimeoutException.class, () -> registry.executeLocked("job", Duration.ofMillis(300), () -> {}));
            FencingToken theirToken = OTHER.call(() -> {
                FencingToken t = held.token();
                held.unlock();
                return t;
            });
            assertTrue(theirToken.isNewerThan(inside));
            registry.executeLocked("job", Duration.ofSeconds(5), () -> {});
        }
    }

    @Test
    void aLostHoldIsToldByTryLockUnlockAndRenewal() throws Exception {
        DiscoLock lock = registry.obtain("leader");
        lock.lock();
        FencingToken before = lock.token();
        registry.renewLock("leader");
        registry.renewLock("leader", Duration.ofSeconds(30));
        assertTrue(lock.tryLock(100, TimeUnit.MILLISECONDS), "valid: nests");
        lock.unlock();

        revokeAndAwaitLost(prefix + "/leader", lock);
        assertThrows(IllegalStateException.class, () -> registry.renewLock("leader"), "the hold was lost");
        assertFalse(lock.tryLock(100, TimeUnit.MILLISECONDS), "a reentrant tryLock confirms the hold: lost");
        assertFalse(lock.isHeldByCurrentThread(), "and released it here");
        assertThrows(ConcurrentModificationException.class, lock::unlock, "the unlock owed for the lost hold");
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "nothing owed any more");

        assertTrue(lock.tryLock(5, TimeUnit.SECONDS), "a fresh hold through the client's new lease");
        try {
            assertTrue(lock.token().isNewerThan(before));
        } finally {
            lock.unlock();
        }
        assertThrows(IllegalMonitorStateException.class, () -> registry.renewLock("leader"), "not held");
    }

    /** Takes the lease of the holder of {@code name} away, and waits until {@code lock} tells the loss. */
    private static void revokeAndAwaitLost(String name, DiscoLock lock) throws Exception {
        EtcdClaims.revokeTheHolder(ETCD.cluster(), ETCD.client(), name);
        org.awaitility.Awaitility.await()
                .pollInSameThread()
                .atMost(Duration.ofSeconds(5))
                .until(() -> assertThrowsLost(lock));
    }

    private static boolean assertThrowsLost(DiscoLock lock) {
        try {
            lock.token();
            return false;
        } catch (LockLostException e) {
            return true;
        }
    }

    @Test
    void theLastUnlockOfALostHoldThrowsAsSpringsRegistriesDo() throws Exception {
        DiscoLock lock = registry.obtain("k");
        lock.lock();
        lock.lock();
        revokeAndAwaitLost(prefix + "/k", lock);
        lock.unlock(); // an inner level
        ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, lock::unlock);
        assertInstanceOf(LockLostException.class, e.getCause());
        assertFalse(lock.isHeldByCurrentThread());

        lock.lock();
        revokeAndAwaitLost(prefix + "/k", lock);
        assertThrows(CannotAcquireLockException.class, lock::lock, "a reentrant lock() refuses a lost hold");
        assertThrows(ConcurrentModificationException.class, lock::unlock);
    }

    @Test
    void expireUnusedOlderThanForgetsIdleLocksOnly() throws Exception {
        DiscoLock idle = registry.obtain("idle");
        idle.lock();
        idle.unlock();
        DiscoLock held = registry.obtain("held");
        held.lock();
        DiscoLock waiting = registry.obtain("waiting");
        try {
            registry.expireUnusedOlderThan(60_000);
            assertSame(idle, registry.obtain("idle"), "used just now");
            registry.expireUnusedOlderThan(0);
            assertNotSame(idle, registry.obtain("idle"), "idle: forgotten");
            assertSame(held, registry.obtain("held"), "held: kept");
            assertNotSame(waiting, registry.obtain("waiting"), "never locked: forgotten");
        } finally {
            held.unlock();
        }
        registry.expireUnusedOlderThan(0);
        assertNotSame(held, registry.obtain("held"), "released: forgotten");
    }

    @Test
    void badInputIsRefusedByName() {
        assertEquals(
                "disco",
                assertThrows(NullPointerException.class, () -> new DiscoLockRegistry(null))
                        .getMessage());
        assertEquals(
                "prefix",
                assertThrows(NullPointerException.class, () -> new DiscoLockRegistry(disco, null))
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> new DiscoLockRegistry(disco, "/x/"));
        DiscoLockRegistry unprefixed = new DiscoLockRegistry(disco);
        assertEquals(
                "ttl",
                assertThrows(NullPointerException.class, () -> unprefixed.renewLock("k", null))
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> unprefixed.renewLock("k", Duration.ZERO));
    }

    /**
     * The registry where an application moves to it from one of Spring's (issue 45, item 8), against real etcd: a
     * negative age for {@code expireUnusedOlderThan} is taken as Spring's Redis, JDBC and ZooKeeper registries take
     * it (every idle lock is forgotten), an unlock or renewal by a thread that does not hold the lock is an
     * {@link IllegalMonitorStateException}, as {@link java.util.concurrent.locks.Lock} says, and any key a Spring
     * application may use works, the ones the name rule would refuse included.
     */
    @Nested
    class AsADropInForSpringsRegistries {

        @Test
        void aNegativeAgeForgetsEveryIdleLockAsZeroDoes() {
            DiscoLock idle = registry.obtain("idle");
            DiscoLock held = registry.obtain("held");
            held.lock();
            try {
                registry.expireUnusedOlderThan(-1);
                assertNotSame(idle, registry.obtain("idle"), "idle: forgotten");
                assertSame(held, registry.obtain("held"), "held: kept");
                registry.expireUnusedOlderThan(Long.MIN_VALUE);
                assertSame(held, registry.obtain("held"), "held: kept");
            } finally {
                held.unlock();
            }
        }

        @Test
        void anUnlockOrRenewalByAThreadThatDoesNotHoldTheLockIsAnIllegalMonitorState() throws Exception {
            DiscoLock lock = registry.obtain("k");
            lock.lock();
            try {
                assertInstanceOf(
                        IllegalMonitorStateException.class,
                        OTHER.failure(() -> {
                            registry.obtain("k").unlock();
                            return null;
                        }),
                        "another thread's unlock");
                assertInstanceOf(
                        IllegalMonitorStateException.class,
                        OTHER.failure(() -> {
                            registry.renewLock("k");
                            return null;
                        }),
                        "another thread's renewal");
                assertInstanceOf(
                        IllegalMonitorStateException.class,
                        OTHER.failure(() -> {
                            registry.renewLock("k", Duration.ofSeconds(30));
                            return null;
                        }),
                        "another thread's renewal with a ttl");
                assertTrue(lock.isHeldByCurrentThread(), "the holder still holds");
                registry.renewLock("k");
            } finally {
                lock.unlock();
            }
            assertThrows(IllegalMonitorStateException.class, lock::unlock, "released already");
            assertThrows(IllegalMonitorStateException.class, () -> registry.renewLock("k"), "released already");
            assertThrows(IllegalMonitorStateException.class, () -> registry.renewLock("never-obtained"));
        }

        @Test
        void everyKeyASpringApplicationMayUseIsALock() throws Exception {
            for (String key : List.of(
                    ".",
                    "..",
                    "...",
                    "a/b",
                    "a%2Fb",
                    "%",
                    "tab\there",
                    "nul\u0000",
                    "emoji\uD83D\uDE00",
                    "private\uE000",
                    "ünïcödé",
                    "order:42@eu")) {
                DiscoLock lock = registry.obtain(key);
                assertTrue(lock.tryLock(5, TimeUnit.SECONDS), key);
                lock.unlock();
            }
            DiscoLock slash = registry.obtain("a/b");
            DiscoLock escaped = registry.obtain("a%2Fb");
            slash.lock();
            try {
                assertTrue(escaped.tryLock(), "two keys, two locks: the escape is unambiguous");
                escaped.unlock();
            } finally {
                slash.unlock();
            }
            assertEquals("%2E", io.disco.client.Names.segment("."));
        }
    }
}
