package io.disco.contract;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.election.ElectionService;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockService;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The thread rules of one owner, shared by every service on it: user code (a dependent stage of a future the
 * user got) that blocks for several TTLs stalls no renewal, and may call back into other services of the same
 * owner. Extend it with a {@link #backend()}.
 */
public abstract class OwnerContract extends ContractSupport {

    /** How long a blocking callback holds on below: three TTLs of a 1 s lease. */
    /**
     * How long the callbacks block: half as long again as the owner's 2 s TTL, so a renewal stalled by them would be a
     * loss before it ends. (A 1 s TTL made ZooKeeper's own pings, a third of the session apart, miss the loss deadline
     * on loaded cores without any callback's help.)
     */
    private static final Duration BLOCKED = Duration.ofSeconds(3);

    @Test
    void aCallbackThatBlocksLongerThanTheTtlDoesNotStallRenewal() throws Exception {
        String name = uniqueName("blocking-callback");
        DiscoBackend.Owner owner = owner(2);
        LockService a = owner.newLock(name);
        RWLockService rw = owner.newRWLock(name + "-rw");
        ElectionService e = owner.newElection(name + "-election");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch inside = new CountDownLatch(3);
        Runnable block = () -> {
            inside.countDown();
            awaitQuietly(release, 30);
        };
        try {
            a.lockAsync().thenAccept(g -> block.run());
            rw.rLockAsync().thenAccept(g -> block.run());
            e.campaignAsync("v").thenAccept(l -> block.run());
            a.done().thenRun(block);
            assertTrue(inside.await(10, SECONDS), "the callbacks must run");

            long until = System.nanoTime() + BLOCKED.toNanos();
            while (System.nanoTime() - until < 0) {
                // The property under test is "alive while blocked past the TTL"; poll it without stopping early.
                assertFalse(owner.done().toCompletableFuture().isDone(), "the lease was lost while callbacks blocked");
                TimeUnit.MILLISECONDS.sleep(100);
            }
            Grant g = a.held().orElseThrow();
            assertKeys(name, g.key()); // the key is still there under the live lease
        } finally {
            release.countDown();
        }
        a.unlock();
        assertKeys(name);
    }

    @Test
    void aCallbackMayCallBackIntoServicesOfTheSameOwner() throws Exception {
        String name = uniqueName("reentrant-callback");
        DiscoBackend.Owner owner = owner(10);
        LockService a = owner.newLock(name + "-a");
        LockService b = owner.newLock(name + "-b");
        LockService c = owner.newLock(name + "-c");
        // Blocking calls on another service of the same owner, from a dependent stage.
        Optional<Grant> gb = a.lockAsync().thenApply(g -> b.tryLock()).get(10, SECONDS);
        assertTrue(gb.isPresent(), "b.tryLock() from a's callback must acquire");
        // unlock() and close() of another service from a dependent stage.
        c.lockAsync()
                .thenRun(() -> {
                    a.unlock();
                    b.close();
                })
                .get(10, SECONDS);
        assertTrue(a.held().isEmpty());
        assertKeys(name + "-a");
        assertKeys(name + "-b");
        assertFalse(owner.done().toCompletableFuture().isDone(), "the owner is alive");
    }

    private static void awaitQuietly(CountDownLatch latch, int seconds) {
        try {
            latch.await(seconds, SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
