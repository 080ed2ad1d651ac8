package io.disco.provider.etcd;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.Primitive;
import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.disco.testservers.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A claim whose withdrawal etcd refuses for good (here: the waiter's user loses its role while it
 * waits, so the delete of its own key is refused) must not block the other owners of the name: the
 * session stops renewing the lease that carries the stuck key, so that it goes within one TTL, and
 * reports the loss of its services with the cause. Checked for every primitive, with the failed
 * waiter's service left open and with it closed (on a session that stays open): another owner is
 * granted within TTL + grant margin of the waiter's failure. Before, it was never granted: the
 * session kept renewing the lease of the stuck key.
 */
class StuckWithdrawalTest {

    private static final int TTL_SECONDS = 3;
    /** The default grant margin: a third of the TTL. */
    private static final Duration BOUND =
            Duration.ofSeconds(TTL_SECONDS).plus(Duration.ofSeconds(TTL_SECONDS).dividedBy(3));

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger USERS = new AtomicInteger();

    private static EtcdCluster etcd;
    private static Client admin;

    @BeforeAll
    static void start() {
        etcd = EtcdCluster.start(1);
        etcd.enableAuth("root-pw");
        admin = Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .user(bytes("root"))
                .password(bytes("root-pw"))
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String root(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "--user=root:root-pw";
        System.arraycopy(args, 0, all, 1, args.length);
        return etcd.etcdctl(all);
    }

    /** A new user whose role has the README's grants on {@code name} for {@code primitive}; returns its name (= password = role). */
    private static String user(Primitive primitive, String name) {
        String user = "waiter" + USERS.incrementAndGet();
        root("role", "add", user);
        root("role", "grant-permission", user, "readwrite", name + "/", "--prefix");
        if (primitive == Primitive.RWLOCK) {
            root("role", "grant-permission", user, "readwrite", EtcdKeys.phaseMarker(name));
        } else if (primitive == Primitive.SEMAPHORE) {
            root("role", "grant-permission", user, "readwrite", EtcdKeys.SLOT_NAMESPACE + name + "/", "--prefix");
            root("role", "grant-permission", user, "readwrite", EtcdKeys.LIMIT_NAMESPACE + name);
        }
        root("user", "add", user + ":" + user);
        root("user", "grant-role", user, user);
        return user;
    }

    private static boolean causedByAccessDenied(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof AccessDeniedException) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest(name = "{0}, failed waiter's service closed: {1}")
    @CsvSource({
        "LOCK,false",
        "LOCK,true",
        "RWLOCK,false",
        "RWLOCK,true",
        "SEMAPHORE,false",
        "SEMAPHORE,true",
        "ELECTION,false",
        "ELECTION,true"
    })
    void aWaiterWhoseWithdrawalIsRefusedBlocksNobodyForLongerThanItsTtl(Primitive primitive, boolean closeWaiter)
            throws Exception {
        String name =
                "/test/stuck-withdrawal/" + primitive.toString().toLowerCase(Locale.ROOT) + "/" + UUID.randomUUID();
        String user = user(primitive, name);
        String[] endpoints = etcd.endpoints().toArray(String[]::new);
        EtcdOptions options = Etcd.options(TTL_SECONDS, 2);
        try (Client waiterClient = Client.builder()
                        .endpoints(endpoints)
                        .user(bytes(user))
                        .password(bytes(user))
                        .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                        .build();
                EtcdSession holderSession = EtcdSession.open(admin, Etcd.ttl(10));
                EtcdSession waiterSession = EtcdSession.open(waiterClient, options);
                EtcdSession nextSession = EtcdSession.open(admin, Etcd.ttl(10));
                AnyPrimitive holder = AnyPrimitive.of(holderSession, primitive, name);
                // The failed waiter asks for a read lock; the others write.
                AnyPrimitive waiter = primitive == Primitive.RWLOCK
                        ? AnyPrimitive.reader(waiterSession, name)
                        : AnyPrimitive.of(waiterSession, primitive, name);
                AnyPrimitive next = AnyPrimitive.of(nextSession, primitive, name)) {
            holder.acquire(WAIT);
            CompletableFuture<?> waiting = waiter.acquireAsync();
            org.awaitility.Awaitility.await()
                    .atMost(WAIT)
                    .until(() -> Etcd.keysUnder(admin, name).size() == 2);

            // The waiter's user loses every permission: its wait fails (its periodic read of the own key is
            // refused), and so does the delete of its own key.
            root("user", "revoke-role", user, user);
            ExecutionException failed = assertThrows(ExecutionException.class, () -> waiting.get(10, SECONDS));
            long failedAt = System.nanoTime();
            System.out.println(primitive + ": the waiter failed with " + failed.getCause());
            assertInstanceOf(AccessDeniedException.class, failed.getCause());
            if (closeWaiter) {
                waiter.close(); // its session stays open
            }

            holder.release();
            next.acquire(BOUND.plus(WAIT));
            long ms = (System.nanoTime() - failedAt) / 1_000_000;
            System.out.println(primitive + (closeWaiter ? " (waiter closed)" : " (waiter left open)")
                    + ": the next owner was granted " + ms + " ms after the waiter failed; bound TTL + grant margin = "
                    + BOUND.toMillis() + " ms");
            assertTrue(
                    ms <= BOUND.toMillis(),
                    "granted within TTL + grant margin (" + BOUND.toMillis() + " ms): " + ms + " ms");

            // The session that could not withdraw its key reported the loss, with the cause.
            assertTrue(waiterSession.done().toCompletableFuture().isDone(), "the waiter's session is finished");
            DiscoException loss =
                    waiterSession.err().orElseThrow(() -> new AssertionError("the waiter's session reports a loss"));
            assertTrue(causedByAccessDenied(loss), "the loss names the cause: " + loss);
            next.release();
        }
    }
}
