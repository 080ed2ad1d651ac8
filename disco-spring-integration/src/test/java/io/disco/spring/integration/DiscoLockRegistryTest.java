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
import io.disco.testing.EtcdClaims;
import io.disco.testing.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/** The registry against real etcd: tokens, exclusion across clients, executeLocked, loss, expiry, renewal. */
class DiscoLockRegistryTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.sharedMember();

    private static Client client;
    private static ExecutorService other;

    @BeforeAll
    static void connect() {
        client = EtcdClaims.client(ETCD.cluster());
        other = Executors.newSingleThreadExecutor();
    }

    @AfterAll
    static void close() {
        other.shutdownNow();
        client.close();
    }

    private static <T> T onOtherThread(Callable<T> task) throws Exception {
        return other.submit(task).get(20, TimeUnit.SECONDS);
    }

    @Test
    void obtainGivesOnePerThreadReentrantLockWithItsToken() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("registry-basics");
        try (Disco disco = Etcd.disco(client); Disco disco2 = Etcd.disco(client)) {
            LockRegistry<DiscoLock> registry = new DiscoLockRegistry(disco, prefix);
            assertInstanceOf(ExpirableLockRegistry.class, registry);
            assertInstanceOf(RenewableLockRegistry.class, registry);
            DiscoLock lock = registry.obtain("orders/42");
            assertSame(lock, registry.obtain("orders/42"));
            assertEquals("orders/42", lock.key());

            lock.lock();
            FencingToken first = lock.token();
            assertTrue(lock.tryLock(), "reentrant");
            assertEquals(first, lock.token(), "one token for nested holds");
            assertEquals(1, EtcdClaims.claims(client, prefix + "/orders%2F42").size(), "the key escaped, one claim");
            boolean otherThread = onOtherThread(() -> lock.tryLock());
            assertFalse(otherThread, "another thread of this process waits");
            DiscoLockRegistry theirs = new DiscoLockRegistry(disco2, prefix);
            boolean otherProcess = onOtherThread(() -> theirs.obtain("orders/42").tryLock(200, TimeUnit.MILLISECONDS));
            assertFalse(otherProcess, "another process waits");
            lock.unlock();
            lock.unlock();

            FencingToken second = onOtherThread(() -> {
                DiscoLock l = theirs.obtain("orders/42");
                l.lock();
                try {
                    return l.token();
                } finally {
                    l.unlock();
                }
            });
            assertTrue(second.isNewerThan(first), first + " then " + second);
            assertThrows(IllegalMonitorStateException.class, lock::unlock, "not held: as java.util.concurrent.locks.Lock says");
            assertThrows(IllegalArgumentException.class, () -> registry.obtain(" "));
            assertThrows(IllegalArgumentException.class, () -> registry.obtain(42));
            assertThrows(NullPointerException.class, () -> registry.obtain(null));
        }
    }

    @Test
    void executeLockedRunsUnderTheLockAndTimesOut() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("registry-execute");
        try (Disco disco = Etcd.disco(client); Disco disco2 = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
            FencingToken inside = registry.executeLocked("job", () -> {
                assertTrue(registry.obtain("job").isHeldByCurrentThread());
                return registry.obtain("job").token();
            });
            assertFalse(registry.obtain("job").isHeldByCurrentThread(), "released after the task");

            DiscoLockRegistry theirs = new DiscoLockRegistry(disco2, prefix);
            DiscoLock held = theirs.obtain("job");
            onOtherThread(() -> {
                held.lock();
                return null;
            });
            assertThrows(TimeoutException.class,
                    () -> registry.executeLocked("job", Duration.ofMillis(300), () -> { }));
            FencingToken theirToken = onOtherThread(() -> {
                FencingToken t = held.token();
                held.unlock();
                return t;
            });
            assertTrue(theirToken.isNewerThan(inside));
            registry.executeLocked("job", Duration.ofSeconds(5), () -> { });
        }
    }

    @Test
    void aLostHoldIsToldByTryLockUnlockAndRenewal() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("registry-loss");
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
            DiscoLock lock = registry.obtain("leader");
            lock.lock();
            FencingToken before = lock.token();
            registry.renewLock("leader");
            registry.renewLock("leader", Duration.ofSeconds(30));
            assertTrue(lock.tryLock(100, TimeUnit.MILLISECONDS), "valid: nests");
            lock.unlock();

            EtcdClaims.revokeTheHolder(ETCD.cluster(), client, prefix + "/leader");
            org.awaitility.Awaitility.await().pollInSameThread().atMost(Duration.ofSeconds(5))
                    .until(() -> assertThrowsLost(lock));
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
        String prefix = EtcdClaims.uniquePrefix("registry-unlock-lost");
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
            DiscoLock lock = registry.obtain("k");
            lock.lock();
            lock.lock();
            EtcdClaims.revokeTheHolder(ETCD.cluster(), client, prefix + "/k");
            org.awaitility.Awaitility.await().pollInSameThread().atMost(Duration.ofSeconds(5)).until(() -> assertThrowsLost(lock));
            lock.unlock(); // an inner level
            ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, lock::unlock);
            assertInstanceOf(LockLostException.class, e.getCause());
            assertFalse(lock.isHeldByCurrentThread());

            lock.lock();
            EtcdClaims.revokeTheHolder(ETCD.cluster(), client, prefix + "/k");
            org.awaitility.Awaitility.await().pollInSameThread().atMost(Duration.ofSeconds(5)).until(() -> assertThrowsLost(lock));
            assertThrows(CannotAcquireLockException.class, lock::lock, "a reentrant lock() refuses a lost hold");
            assertThrows(ConcurrentModificationException.class, lock::unlock);
        }
    }

    @Test
    void expireUnusedOlderThanForgetsIdleLocksOnly() throws Exception {
        String prefix = EtcdClaims.uniquePrefix("registry-expire");
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, prefix);
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
    }

    @Test
    void badInputIsRefusedByName() {
        try (Disco disco = Etcd.disco(client)) {
            assertEquals("disco", assertThrows(NullPointerException.class, () -> new DiscoLockRegistry(null)).getMessage());
            assertEquals("prefix", assertThrows(NullPointerException.class, () -> new DiscoLockRegistry(disco, null)).getMessage());
            assertThrows(IllegalArgumentException.class, () -> new DiscoLockRegistry(disco, "/x/"));
            DiscoLockRegistry registry = new DiscoLockRegistry(disco);
            assertEquals("ttl", assertThrows(NullPointerException.class, () -> registry.renewLock("k", null)).getMessage());
            assertThrows(IllegalArgumentException.class, () -> registry.renewLock("k", Duration.ZERO));
        }
    }

}
