package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.bytes;
import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.rwlock.RWLockLostException;
import io.disco.rwlock.RWLockService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A waiter is admitted by the delete of the last key ahead of it, with no read ({@link PredecessorWait}): never
 * while a key with a lower CreateRevision is left in its wait range (another client's, in another language, counts
 * like any), at the revision of that delete, and never when its own key went at or before it. The keys ahead are
 * written and deleted here with a plain client, the way another client of the same names would.
 */
class WaiterAdmissionTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /** How long a waiter that must not be admitted is given to be admitted wrongly. */
    private static final long NOT_ADMITTED_WITHIN_MS = 500;

    private static Client client;

    @BeforeAll
    static void connect() {
        client = Etcd.client(ETCD.cluster());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @Test
    void aWaiterIsNotAdmittedWhileAnotherClientsKeyIsAheadOfIt() throws Exception {
        String name = uniquePrefix("ahead");
        try (LockService holder = EtcdProvider.newLock(client, name, ttl(30));
                LockService waiter = EtcdProvider.newLock(client, name, ttl(30))) {
            holder.lock();
            String foreign = EtcdKeys.queue(name) + "f0f0";
            client.getKVClient().put(bytes(foreign), bytes("")).get(5, SECONDS);
            CompletableFuture<Grant> waiting = queued(waiter.lockAsync(), name, 3);

            holder.unlock(); // one of the two keys ahead
            assertThrows(TimeoutException.class, () -> waiting.get(NOT_ADMITTED_WITHIN_MS, MILLISECONDS));

            long deletedAt = delete(foreign);
            assertEquals(
                    deletedAt,
                    waiting.get(10, SECONDS).token().value(),
                    "admitted at the revision of the delete of the last key ahead");
            waiter.unlock();
        }
    }

    @Test
    void aQueueLongerThanOneReadOfNamesIsFollowedToItsEnd() throws Exception {
        String name = uniquePrefix("long");
        List<String> ahead = new ArrayList<>();
        for (int i = 0; i < Ahead.readLimit(0) + PredecessorWait.WATCH_ALL_AT + 3; i++) {
            String key = EtcdKeys.queue(name) + String.format("f%04x", i);
            client.getKVClient().put(bytes(key), bytes("")).get(5, SECONDS);
            ahead.add(key);
        }
        try (LockService waiter = EtcdProvider.newLock(client, name, ttl(30))) {
            CompletableFuture<Grant> waiting = queued(waiter.lockAsync(), name, ahead.size() + 1);
            // Newest first, the oldest last: the names the waiter's create Txn read go first, and its horizon key
            // goes while more than a horizon's worth are still ahead.
            for (int i = ahead.size() - 1; i > 0; i--) {
                delete(ahead.get(i));
                assertFalse(waiting.isDone(), "admitted with " + i + " keys ahead");
            }
            assertThrows(TimeoutException.class, () -> waiting.get(NOT_ADMITTED_WITHIN_MS, MILLISECONDS));
            long deletedAt = delete(ahead.get(0));
            assertEquals(deletedAt, waiting.get(10, SECONDS).token().value());
            waiter.unlock();
        }
    }

    @Test
    void aWaiterWhoseOwnKeyGoesWithTheLastKeyAheadIsNotAdmitted() throws Exception {
        String name = uniquePrefix("both");
        try (LockService waiter = EtcdProvider.newLock(client, name, ttl(30))) {
            assertLostWithTheLastKeyAhead(
                    name, EtcdKeys.queue(name) + "f0f0", waiter::lockAsync, LockLostException.class);
        }
    }

    @Test
    void aReaderWhoseOwnKeyGoesWithTheLastWriterAheadIsNotAdmitted() throws Exception {
        // A reader waits on the writers only, and its own key is a reader's: its watch must hold both.
        String name = uniquePrefix("reader");
        try (RWLockService reader = EtcdProvider.newRWLock(client, name, ttl(30))) {
            assertLostWithTheLastKeyAhead(
                    name, EtcdKeys.writers(name) + "f0f0", reader::rLockAsync, RWLockLostException.class);
        }
    }

    /**
     * Puts {@code foreign} ahead, starts {@code waiting} behind it, then deletes both in one Txn (one revision: the own
     * key is gone at the revision that empties the queue): the wait must fail with {@code lost}, never be admitted.
     */
    private static void assertLostWithTheLastKeyAhead(
            String name, String foreign, Supplier<CompletableFuture<?>> wait, Class<? extends Throwable> lost)
            throws Exception {
        client.getKVClient().put(bytes(foreign), bytes("")).get(5, SECONDS);
        CompletableFuture<?> waiting = queued(wait.get(), name, 2);
        String own = ownKeyOf(name, foreign);
        client.getKVClient()
                .txn()
                .Then(Op.delete(bytes(foreign), DeleteOption.DEFAULT), Op.delete(bytes(own), DeleteOption.DEFAULT))
                .commit()
                .get(5, SECONDS);

        ExecutionException failed = assertThrows(ExecutionException.class, () -> waiting.get(10, SECONDS));
        assertInstanceOf(lost, failed.getCause());
    }

    /** {@code waiting}, once {@code keys} keys are under {@code name} (its own key is created), and not admitted. */
    private static <G> CompletableFuture<G> queued(CompletableFuture<G> waiting, String name, int keys) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> keysUnder(client, name).size() == keys);
        assertFalse(waiting.isDone(), "admitted with keys ahead");
        return waiting;
    }

    /** The one key under {@code name} that is not {@code other}. */
    private static String ownKeyOf(String name, String other) throws Exception {
        List<String> keys = new ArrayList<>(keysUnder(client, name));
        keys.remove(other);
        assertEquals(1, keys.size(), "keys under " + name + ": " + keys);
        return keys.get(0);
    }

    /** @return the revision of the delete */
    private static long delete(String key) throws Exception {
        var r = client.getKVClient().delete(bytes(key)).get(5, SECONDS);
        assertEquals(1, r.getDeleted(), key);
        return r.getHeader().getRevision();
    }
}
