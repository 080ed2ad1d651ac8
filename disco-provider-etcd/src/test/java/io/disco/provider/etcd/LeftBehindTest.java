package io.disco.provider.etcd;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.Primitive;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's table "what giving up or failing leaves in etcd", measured: for every primitive, each
 * way a waiter gives up (timeout, interrupt, cancel, close) and each way a holder ends (release,
 * close, session close, lease left to expire as after a crash or a freeze), the keys left on the
 * owner's lease (every key it writes is leased: the own key, a semaphore's slot key) when the call
 * returns, and how long until none is left. The unleased records (a read/write lock's phase marker, a
 * semaphore's limit) are the name's and stay by design. The figures are printed, one line per case.
 */
class LeftBehindTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final int TTL_SECONDS = 3;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final List<String> ROWS = new ArrayList<>();

    @AfterAll
    static void print() {
        System.out.println("| primitive | way | keys left on the owner's lease when the call returns | gone after |");
        ROWS.forEach(System.out::println);
    }

    /** A new service of {@code kind} on {@code session}; a read/write lock's waiter reads if {@code kind} says so. */
    private static AnyPrimitive owner(EtcdSession session, String kind, String name, boolean waiter) {
        return switch (kind) {
            case "lock" -> AnyPrimitive.of(session, Primitive.LOCK, name);
            case "rwlock (read)" ->
                waiter
                        ? AnyPrimitive.reader(session, name)
                        : AnyPrimitive.of(session, Primitive.RWLOCK, name); // the holder writes
            case "rwlock (write)" -> AnyPrimitive.of(session, Primitive.RWLOCK, name);
            case "semaphore" -> AnyPrimitive.of(session, Primitive.SEMAPHORE, name);
            case "election" -> AnyPrimitive.of(session, Primitive.ELECTION, name);
            default -> throw new IllegalArgumentException(kind);
        };
    }

    /** The keys attached to {@code session}'s lease (none once the lease is gone). */
    private static List<String> keysOf(Client client, EtcdSession session) throws Exception {
        return client
                .getLeaseClient()
                .timeToLive(
                        session.leaseId(),
                        LeaseOption.builder().withAttachedKeys().build())
                .get(5, TimeUnit.SECONDS)
                .getKeys()
                .stream()
                .map(k -> k.toString(StandardCharsets.UTF_8))
                .collect(Collectors.toList());
    }

    /** Records what {@code session}'s lease carries now, and how long until it carries nothing. */
    private static long measure(
            Client client, EtcdSession session, String kind, String way, long since, Duration atMost) throws Exception {
        List<String> now = keysOf(client, session);
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> keysOf(client, session).isEmpty());
        long ms = now.isEmpty() ? 0 : (System.nanoTime() - since) / 1_000_000;
        ROWS.add("| " + kind + " | " + way + " | " + now.size() + " | " + ms + " ms |");
        return ms;
    }

    private static EtcdOptions options() {
        return Etcd.options(TTL_SECONDS, 5);
    }

    @Test
    void lock() throws Exception {
        run("lock");
    }

    @Test
    void readWriteLockRead() throws Exception {
        run("rwlock (read)");
    }

    @Test
    void readWriteLockWrite() throws Exception {
        run("rwlock (write)");
    }

    @Test
    void semaphore() throws Exception {
        run("semaphore");
    }

    @Test
    void election() throws Exception {
        run("election");
    }

    private void run(String kind) throws Exception {
        String name = Etcd.uniquePrefix("left-behind");
        try (Client client = Etcd.client(ETCD.cluster());
                EtcdSession hs = EtcdSession.open(client, options())) {
            AnyPrimitive holder = owner(hs, kind, name, false);
            holder.acquire(WAIT);

            // A waiter gives up: timeout, interrupt, cancel, close. Each on a session of its own.
            try (EtcdSession ws = EtcdSession.open(client, options())) {
                AnyPrimitive waiter = owner(ws, kind, name, true);
                assertThrows(TimeoutException.class, () -> waiter.acquire(Duration.ofMillis(300)));
                assertEquals(0, measure(client, ws, kind, "waiter: timeout", System.nanoTime(), WAIT));

                Thread t = new Thread(() -> {
                    try {
                        waiter.acquire();
                    } catch (Exception e) {
                        // interrupted, as intended
                    }
                });
                t.start();
                await().atMost(WAIT).until(() -> !keysOf(client, ws).isEmpty());
                t.interrupt();
                t.join(WAIT.toMillis());
                assertEquals(0, measure(client, ws, kind, "waiter: interrupt", System.nanoTime(), WAIT));

                CompletableFuture<?> f = waiter.acquireAsync();
                await().atMost(WAIT).until(() -> !keysOf(client, ws).isEmpty());
                long cancelled = System.nanoTime();
                assertTrue(f.cancel(true));
                assertTrue(measure(client, ws, kind, "waiter: cancel of the future", cancelled, WAIT) < 1000);

                waiter.acquireAsync();
                await().atMost(WAIT).until(() -> !keysOf(client, ws).isEmpty());
                waiter.close(); // its session stays open
                assertEquals(0, measure(client, ws, kind, "waiter: close() of its service", System.nanoTime(), WAIT));
            }

            // A holder ends: release, close of the service, close of the session, lease left to expire.
            holder.release();
            assertEquals(0, measure(client, hs, kind, "holder: release", System.nanoTime(), WAIT));
            holder.acquire(WAIT);
            holder.close();
            assertEquals(0, measure(client, hs, kind, "holder: close() of its service", System.nanoTime(), WAIT));
        }
        try (Client client = Etcd.client(ETCD.cluster())) {
            EtcdSession s = EtcdSession.open(client, options());
            owner(s, kind, name, false).acquire(WAIT);
            s.close();
            assertEquals(0, measure(client, s, kind, "holder: close() of its session", System.nanoTime(), WAIT));

            try (EtcdSession frozen = EtcdSession.open(client, options())) {
                owner(frozen, kind, name, false).acquire(WAIT);
                long orphaned = System.nanoTime();
                frozen.orphan(); // no more renewals: a crashed or frozen process
                long ms = measure(
                        client, frozen, kind, "holder: crash or freeze (renewals stop)", orphaned, WAIT.plus(WAIT));
                assertTrue(ms <= TTL_SECONDS * 1000 + 1000, "gone within the TTL + 1 s: " + ms + " ms");
            }
        }
    }
}
