package io.disco.provider.zookeeper;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The thread rule on ZooKeeper (OwnerContract's first case without the election, which is not built on
 * ZooKeeper yet): user callbacks that block for three session timeouts stall neither the session's liveness
 * nor its loss detection, and no user stage runs on Curator's or the session's threads.
 */
class ThreadModelTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private DiscoBackend.Owner owner;
    private DiscoBackend.Owner other;

    @AfterEach
    void close() {
        if (other != null) {
            other.close();
        }
        if (owner != null) {
            owner.close();
        }
    }

    @Test
    void callbacksThatBlockForThreeTimeoutsStallNothing() throws Exception {
        String name = "/threads/" + UUID.randomUUID();
        owner = ZK.backend().open(Duration.ofSeconds(1));
        LockService lock = owner.newLock(name);
        RWLockService rw = owner.newRWLock(name + "-rw");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inside = new CountDownLatch(2);
        List<Thread> ranOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        Runnable block = () -> {
            ranOn.add(Thread.currentThread());
            inside.countDown();
            try {
                release.await(30, SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try {
            lock.lockAsync().thenAccept(g -> block.run());
            rw.rLockAsync().thenAccept(g -> block.run());
            lock.done().thenRun(block); // blocks once the lock is lost, below
            assertTrue(inside.await(10, SECONDS), "the callbacks must run");
            for (Thread t : ranOn) {
                assertFalse(ZK.backend().isBackendThread(t), "a user stage ran on " + t.getName());
            }
            // Three session timeouts: the session stays alive, the key stays under it.
            CompletableFuture<Void> ended = owner.done().toCompletableFuture();
            Awaitility.await()
                    .during(Duration.ofSeconds(3))
                    .atMost(Duration.ofSeconds(4))
                    .until(() -> !ended.isDone());
            Grant g = lock.held().orElseThrow();
            assertEquals(List.of(g.key()), ZK.backend().keys(name));

            // And loss detection is not stalled either: a frozen owner is declared lost within the timeout.
            ZK.backend().freeze(owner);
            ended.get(3, SECONDS);
            assertTrue(lock.err().isPresent());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> ranOn.size() == 3); // the lock's done() stage ran
            assertFalse(
                    ZK.backend().isBackendThread(ranOn.get(2)),
                    "the done() stage ran on " + ranOn.get(2).getName());
        } finally {
            release.countDown();
        }
    }
}
