package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.DiscoStatus;
import io.disco.client.FencedSemaphore;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The jetcd {@code Client} closed before the {@code Disco} (or an {@code EtcdSession}) that runs on it, a
 * common shutdown-order mistake (issue 45, item 5): detected at once, the status says so, every new
 * operation throws {@link IllegalStateException} saying the client was closed first, a hold made before
 * reports its loss with the same reason, and nothing retries.
 */
class ClientClosedFirstTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static void saysClosedFirst(Throwable e) {
        assertTrue(
                e.getMessage() != null && e.getMessage().contains("closed before"),
                "says the client was closed first: " + e);
    }

    @Test
    void disco() throws Exception {
        String name = uniquePrefix("closed-first");
        CapturedStderr stderr = CapturedStderr.start();
        Client client = Etcd.client(ETCD.cluster());
        Disco disco = EtcdProvider.disco(client, Etcd.ttl(30));
        try {
            FencedLock lock = disco.lock(name);
            lock.lock();
            FencedSemaphore semaphore = disco.semaphore(name + "-s", 2);
            var permit = semaphore.acquire(Duration.ofSeconds(5));
            FencedLock other = disco.lock(name); // a handle made before

            client.close();
            long closed = System.nanoTime();
            DiscoStatus s = disco.status();
            long statusNanos = System.nanoTime() - closed;
            System.out.println("status right after the jetcd Client was closed: " + s);
            assertEquals(DiscoStatus.State.CLOSED, s.state(), s.toString());
            assertTrue(s.lastProblem().orElse("").contains("closed before"), s.toString());
            assertTrue(
                    statusNanos < TimeUnit.MILLISECONDS.toNanos(200), "status took " + statusNanos / 1_000_000 + " ms");

            // the hold made before reports the loss, with the reason
            LockLostException lost = assertThrows(LockLostException.class, lock::token);
            saysClosedFirstSomewhere(lost);
            assertThrows(LockLostException.class, lock::unlock);
            assertTrue(semaphore.err(permit).isPresent());

            // every new operation: IllegalStateException, at once, saying so
            long t = System.nanoTime();
            saysClosedFirst(assertThrows(IllegalStateException.class, () -> disco.lock(name + "-other")));
            saysClosedFirst(assertThrows(IllegalStateException.class, () -> disco.readWriteLock(name + "-rw")));
            saysClosedFirst(assertThrows(IllegalStateException.class, () -> disco.semaphore(name + "-s2", 1)));
            saysClosedFirst(assertThrows(IllegalStateException.class, () -> disco.election(name + "-e")));
            saysClosedFirst(
                    unwrap(() -> CompletableFuture.supplyAsync(other::tryLock).join()));
            saysClosedFirst(unwrap(() -> CompletableFuture.supplyAsync(() -> {
                        try {
                            return other.tryLock(3, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    })
                    .join()));
            assertTrue(System.nanoTime() - t < TimeUnit.SECONDS.toNanos(2), "all at once, not after tryLock's timeout");

            disco.close(); // quiet and idempotent
            assertEquals(DiscoStatus.State.CLOSED, disco.status().state());
            String log = stderr.log();
            long warnings = log.lines()
                    .filter(l -> l.contains("WARN") && l.contains("closed before") && l.contains("it stops"))
                    .count();
            assertEquals(1, warnings, "the client says it once:\n" + log);
            assertTrue(!log.contains("rejected from"), "no executor's message:\n" + log);
            assertTrue(!log.contains("could not open a new owner"), "no retry:\n" + log);
        } finally {
            stderr.close();
            disco.close();
        }
    }

    @Test
    void session() throws Exception {
        String name = uniquePrefix("closed-first-session");
        Client client = Etcd.client(ETCD.cluster());
        EtcdSession session = EtcdSession.open(client, Etcd.ttl(30));
        try {
            LockService lock = session.newLock(name);
            lock.lock(Duration.ofSeconds(5));
            client.close();
            assertTrue(session.err().isPresent(), "the session is lost at once");
            saysClosedFirst(session.err().get());
            assertEquals(EtcdSession.State.LOST, session.state());
            saysClosedFirst(assertThrows(IllegalStateException.class, () -> session.newLock(name + "-other")));
            lock.done().toCompletableFuture().get(2, TimeUnit.SECONDS);
            assertInstanceOf(LockLostException.class, lock.err().orElseThrow());
        } finally {
            session.close();
        }
    }

    private static void saysClosedFirstSomewhere(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c.getMessage() != null && c.getMessage().contains("closed before")) {
                return;
            }
        }
        throw new AssertionError("no cause says the client was closed first", e);
    }

    private static Throwable unwrap(Runnable r) {
        try {
            r.run();
        } catch (java.util.concurrent.CompletionException e) {
            assertInstanceOf(IllegalStateException.class, e.getCause());
            return e.getCause();
        }
        throw new AssertionError("did not fail");
    }
}
