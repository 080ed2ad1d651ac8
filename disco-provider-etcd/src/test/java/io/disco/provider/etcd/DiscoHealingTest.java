package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.client.FencedReadWriteLock;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import io.disco.rwlock.RWLockLostException;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The client heals (issue 34, item 6): after its lease is lost, the holds under it report the loss and
 * new acquisitions succeed through a new lease within 2 s of etcd answering again, with higher tokens,
 * and no key of the lost lease is left.
 */
class DiscoHealingTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** A client connected before the timed parts (its first request pays for the connection). */
    private static Client connected(EtcdCluster etcd) throws Exception {
        Client client = Etcd.client(etcd);
        Etcd.revision(client);
        return client;
    }

    private static EtcdOptions options() {
        return Etcd.options(2, 1);
    }

    private static <T> T on(ExecutorService thread, Callable<T> task) throws Exception {
        return thread.submit(task).get(20, TimeUnit.SECONDS);
    }

    private static Throwable failure(ExecutorService thread, Callable<?> task) throws Exception {
        try {
            thread.submit(task).get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("the call did not fail");
    }

    /** Locks on a fresh thread, as a request after the loss would; returns the token and how long it took. */
    private static long[] lockOnce(Disco disco, String name, Client client) throws Exception {
        ExecutorService t = Executors.newSingleThreadExecutor();
        try {
            return on(t, () -> {
                long start = System.nanoTime();
                FencedLock lock = disco.lock(name);
                if (!lock.tryLock(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("not acquired within 10 s");
                }
                try {
                    long took = System.nanoTime() - start;
                    List<String> keys = keysUnder(client, name);
                    assertEquals(1, keys.size(), "one key, the new lease's: " + keys);
                    return new long[] {
                        lock.token().value(), took, Long.parseLong(keys.get(0).substring(name.length() + 1), 16)
                    };
                } finally {
                    lock.unlock();
                }
            });
        } finally {
            t.shutdownNow();
        }
    }

    @Test
    void etcdDownPastTheTtlThenBack() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String name = uniquePrefix("heal-outage");
        String rwName = uniquePrefix("heal-outage-rw");
        ExecutorService holder = Executors.newSingleThreadExecutor();
        try (Client client = connected(etcd);
                Disco disco = EtcdProvider.disco(client, options())) {
            FencedLock lock = disco.lock(name);
            FencedReadWriteLock rw = disco.readWriteLock(rwName);
            FencingToken before = on(holder, () -> {
                lock.lock();
                rw.readLock().lock();
                return lock.token();
            });
            String lostKey = keysUnder(client, name).get(0);
            CompletionStage<Void> done = on(holder, lock::done);
            CompletionStage<Void> readDone = on(holder, () -> rw.readLock().done());

            etcd.stopMember(0);
            done.toCompletableFuture().get(10, TimeUnit.SECONDS);
            readDone.toCompletableFuture().get(10, TimeUnit.SECONDS);
            assertInstanceOf(
                    LockLostException.class, on(holder, () -> lock.err().orElseThrow()));
            assertInstanceOf(LockLostException.class, failure(holder, lock::token));
            assertInstanceOf(
                    RWLockLostException.class,
                    failure(holder, () -> rw.readLock().token()));
            assertInstanceOf(LockLostException.class, failure(holder, () -> {
                lock.unlock();
                return null;
            }));
            assertInstanceOf(RWLockLostException.class, failure(holder, () -> {
                rw.readLock().unlock();
                return null;
            }));

            etcd.startMember(0);
            await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> Etcd.revision(client) > 0);
            long answering = System.nanoTime();
            long[] after = lockOnce(disco, name, client);
            long sinceAnswering = System.nanoTime() - answering;
            assertTrue(
                    sinceAnswering < TimeUnit.SECONDS.toNanos(2),
                    "acquired " + sinceAnswering / 1_000_000 + " ms after etcd answered");
            assertTrue(after[0] > before.value(), "a higher token: " + after[0] + " after " + before.value());
            assertNotEquals(lostKey, name + "/" + Long.toHexString(after[2]));
            assertEquals(List.of(), keysUnder(client, name));
            assertEquals(List.of(), keysUnder(client, rwName), "the lost lease's read key is gone too");
            assertTrue(
                    on(holder, () -> {
                        if (!rw.writeLock().tryLock(5, TimeUnit.SECONDS)) {
                            return false;
                        }
                        try {
                            return rw.writeLock().token().compareTo(before) > 0;
                        } finally {
                            rw.writeLock().unlock();
                        }
                    }),
                    "the read/write lock heals too, with a higher token");
        } finally {
            holder.shutdownNow();
        }
    }

    @Test
    void leaseRevokedWithEtcdctl() throws Exception {
        EtcdCluster etcd = ETCD.cluster();
        String name = uniquePrefix("heal-revoke");
        String contended = uniquePrefix("heal-revoke-waiting");
        ExecutorService holder = Executors.newSingleThreadExecutor();
        ExecutorService waiter = Executors.newSingleThreadExecutor();
        try (Client client = connected(etcd);
                Disco disco = EtcdProvider.disco(client, options());
                Disco other = EtcdProvider.disco(client, Etcd.ttl(10))) {
            FencedLock lock = disco.lock(name);
            FencingToken before = on(holder, () -> {
                lock.lock();
                return lock.token();
            });
            String key = keysUnder(client, name).get(0);
            String lease = key.substring(name.length() + 1);
            CompletionStage<Void> done = on(holder, lock::done);

            // A thread of this client waits in etcd's queue (behind another process) at the moment of loss.
            FencedLock theirs = other.lock(contended);
            theirs.lock();
            FencingToken theirToken = theirs.token();
            Future<Long> waiting = waiter.submit(() -> {
                FencedLock l = disco.lock(contended);
                l.lock();
                try {
                    return l.token().value();
                } finally {
                    l.unlock();
                }
            });
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> keysUnder(client, contended).size() == 2);

            etcd.etcdctl("lease", "revoke", lease);
            long revoked = System.nanoTime();
            done.toCompletableFuture().get(5, TimeUnit.SECONDS);
            assertInstanceOf(LockLostException.class, failure(holder, lock::token));
            assertInstanceOf(LockLostException.class, failure(holder, () -> {
                lock.unlock();
                return null;
            }));

            long[] after = lockOnce(disco, name, client);
            long sinceRevoke = System.nanoTime() - revoked;
            assertTrue(
                    sinceRevoke < TimeUnit.SECONDS.toNanos(2),
                    "acquired " + sinceRevoke / 1_000_000 + " ms after the revoke");
            assertTrue(after[0] > before.value());
            assertNotEquals(Long.parseLong(lease, 16), after[2], "through a new lease");

            // The waiter held nothing: it claimed again through the new lease and gets the lock once it is free.
            await().atMost(Duration.ofSeconds(5))
                    .failFast(() -> {
                        if (waiting.isDone()) {
                            waiting.get(); // says how it failed
                        }
                        return false;
                    })
                    .until(() -> keysUnder(client, contended).size() == 2);
            assertTrue(!waiting.isDone());
            theirs.unlock();
            assertTrue(waiting.get(10, TimeUnit.SECONDS) > theirToken.value());
            assertEquals(List.of(), keysUnder(client, name));
            assertEquals(List.of(), keysUnder(client, contended));
        } finally {
            holder.shutdownNow();
            waiter.shutdownNow();
        }
    }
}
