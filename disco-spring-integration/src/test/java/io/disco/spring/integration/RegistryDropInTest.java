package io.disco.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.testing.EtcdClaims;
import io.disco.testing.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The registry where an application moves to it from one of Spring's (issue 45, item 8), against real etcd: a
 * negative age for {@code expireUnusedOlderThan} is taken as Spring's Redis, JDBC and ZooKeeper registries take
 * it (every idle lock is forgotten), an unlock or renewal by a thread that does not hold the lock is an
 * {@link IllegalMonitorStateException}, as {@link java.util.concurrent.locks.Lock} says, and any key a Spring
 * application may use works, the ones the name rule would refuse included.
 */
class RegistryDropInTest {

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

    private static Throwable failureOnOtherThread(Callable<?> task) throws Exception {
        try {
            other.submit(task).get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the task did not fail");
    }

    @Test
    void aNegativeAgeForgetsEveryIdleLockAsZeroDoes() {
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, EtcdClaims.uniquePrefix("registry-negative-age"));
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
    }

    @Test
    void anUnlockOrRenewalByAThreadThatDoesNotHoldTheLockIsAnIllegalMonitorState() throws Exception {
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, EtcdClaims.uniquePrefix("registry-not-owner"));
            DiscoLock lock = registry.obtain("k");
            lock.lock();
            try {
                assertInstanceOf(IllegalMonitorStateException.class, failureOnOtherThread(() -> {
                    registry.obtain("k").unlock();
                    return null;
                }), "another thread's unlock");
                assertInstanceOf(IllegalMonitorStateException.class, failureOnOtherThread(() -> {
                    registry.renewLock("k");
                    return null;
                }), "another thread's renewal");
                assertInstanceOf(IllegalMonitorStateException.class, failureOnOtherThread(() -> {
                    registry.renewLock("k", Duration.ofSeconds(30));
                    return null;
                }), "another thread's renewal with a ttl");
                assertTrue(lock.isHeldByCurrentThread(), "the holder still holds");
                registry.renewLock("k");
            } finally {
                lock.unlock();
            }
            assertThrows(IllegalMonitorStateException.class, lock::unlock, "released already");
            assertThrows(IllegalMonitorStateException.class, () -> registry.renewLock("k"), "released already");
            assertThrows(IllegalMonitorStateException.class, () -> registry.renewLock("never-obtained"));
        }
    }

    @Test
    void everyKeyASpringApplicationMayUseIsALock() throws Exception {
        try (Disco disco = Etcd.disco(client)) {
            DiscoLockRegistry registry = new DiscoLockRegistry(disco, EtcdClaims.uniquePrefix("registry-any-key"));
            for (String key : List.of(".", "..", "...", "a/b", "a%2Fb", "%", "tab\there", "nul\u0000", "emoji\uD83D\uDE00",
                    "private\uE000", "ünïcödé", "order:42@eu")) {
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
