package io.disco.provider.etcd;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.fencing.AccessDeniedException;
import io.disco.fencing.DiscoException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.disco.testservers.EtcdCluster;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.EtcdTls;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The core cases of every primitive over TLS, over mutual TLS, and as a user whose role grants
 * read-write on exactly the keys of its names (the least-privilege grants the README lists).
 */
class SecurityTest {

    @RegisterExtension
    static final EtcdExtension PLAIN = EtcdExtension.singleMember();

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static Client tlsClient(EtcdCluster etcd, EtcdTls tls, boolean presentCertificate) throws Exception {
        return Client.builder()
                .endpoints(etcd.endpoints().toArray(String[]::new))
                .sslContext(b -> {
                    b.trustManager(tls.caFile().toFile());
                    if (presentCertificate) {
                        b.keyManager(
                                tls.clientCertFile().toFile(),
                                tls.clientKeyFile().toFile());
                    }
                })
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
    }

    /** Acquire, wait and hand over, lease loss and observe, for the lock, the read/write lock, the election and the semaphore. */
    private static void coreCases(Client a, Client b, String base) throws Exception {
        try (EtcdSession sa = EtcdSession.open(a, Etcd.ttl(2));
                EtcdSession sb = EtcdSession.open(b, Etcd.ttl(10))) {
            LockService la = sa.newLock(base + "/lock");
            LockService lb = sb.newLock(base + "/lock");
            Grant first = la.lock(WAIT);
            CompletableFuture<Grant> waiting = lb.lockAsync();
            RWLockService ra = sa.newRWLock(base + "/rw");
            RWLockService rb = sb.newRWLock(base + "/rw");
            RWGrant read = ra.rLock(WAIT);
            CompletableFuture<RWGrant> writer = rb.lockAsync();
            ElectionService ea = sa.newElection(base + "/election");
            ElectionService eb = sb.newElection(base + "/election");
            List<String> seen = new CopyOnWriteArrayList<>();
            try (Observation obs = eb.observe(l -> seen.add(l.value()))) {
                Leadership leader = ea.campaign("a", WAIT);
                CompletableFuture<Leadership> next = eb.campaignAsync("b");
                SemaphoreService sema = sa.newSemaphore(base + "/semaphore", 1);
                SemaphoreService semb = sb.newSemaphore(base + "/semaphore", 1);
                Permit permit = sema.acquire(WAIT);
                CompletableFuture<Permit> nextPermit = semb.acquireAsync();

                sa.orphan(); // a's lease runs out: every grant of a passes to b
                sa.done().toCompletableFuture().get(15, SECONDS);
                assertTrue(waiting.get(15, SECONDS).token().isNewerThan(first.token()));
                assertTrue(writer.get(15, SECONDS).token().isNewerThan(read.token()));
                assertTrue(next.get(15, SECONDS).token().isNewerThan(leader.token()));
                assertTrue(nextPermit.get(15, SECONDS).token().isNewerThan(permit.token()));
                Awaitility.await().atMost(WAIT).until(() -> seen.equals(List.of("a", "b")));
            }
            lb.unlock();
            rb.unlock();
            eb.resign();
        }
    }

    @Test
    void overTls() throws Exception {
        EtcdTls tls = EtcdTls.generate(false, "client");
        try (EtcdCluster etcd = EtcdCluster.start(1, tls);
                Client a = tlsClient(etcd, tls, false);
                Client b = tlsClient(etcd, tls, false)) {
            assertTrue(
                    etcd.endpoints().get(0).startsWith("https://"),
                    etcd.endpoints().toString());
            coreCases(a, b, "/test/tls/" + UUID.randomUUID());
        }
    }

    @Test
    void overMutualTlsAndAClientWithoutACertificateGetsATimelyError() throws Exception {
        EtcdTls tls = EtcdTls.generate(true, "client");
        try (EtcdCluster etcd = EtcdCluster.start(1, tls);
                Client a = tlsClient(etcd, tls, true);
                Client b = tlsClient(etcd, tls, true)) {
            coreCases(a, b, "/test/mtls/" + UUID.randomUUID());
            try (Client anonymous = tlsClient(etcd, tls, false)) {
                long start = System.nanoTime();
                DiscoException e = assertThrows(
                        DiscoException.class,
                        () -> EtcdSession.open(
                                anonymous,
                                EtcdOptions.builder()
                                        .requestTimeout(Duration.ofSeconds(2))
                                        .build()));
                long ms = (System.nanoTime() - start) / 1_000_000;
                System.out.println(
                        "mutual TLS without a client certificate: " + e.getMessage() + " after " + ms + " ms");
                assertTrue(ms < 5000, "a timeout, not a hang: " + ms + " ms");
            }
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final ByteSequence ROOT = bytes("root");
    private static final ByteSequence ROOT_PW = bytes("root-pw");
    private static final ByteSequence APP = bytes("app");
    private static final ByteSequence APP_PW = bytes("app-pw");

    /** Read-write for the role "app" on the prefix {@code key}, or on the single key when {@code single}. */
    private static void grant(EtcdCluster etcd, String key, boolean single, String... auth) {
        List<String> args = new java.util.ArrayList<>(List.of(auth));
        args.addAll(List.of("role", "grant-permission", "app", "readwrite", key));
        if (!single) {
            args.add("--prefix");
        }
        etcd.etcdctl(args.toArray(String[]::new));
    }

    /** As root: the role "app" loses its permissions on the lock names under {@code base}. */
    private static void revokeLockPermissions(EtcdCluster etcd, String base) {
        etcd.etcdctl("--user=root:root-pw", "role", "revoke-permission", "app", base + "/lock/", "--prefix");
    }

    /**
     * Through the harness (etcdctl): a user "app" whose role has the README's grants for the names
     * under {@code base}, then authentication on with a root user.
     */
    private static void enableAuth(EtcdCluster etcd, String base) {
        etcd.etcdctl("role", "add", "app");
        grant(etcd, base + "/lock/", false);
        grant(etcd, base + "/election/", false);
        grant(etcd, base + "/rw/", false);
        grant(etcd, EtcdKeys.phaseMarker(base + "/rw"), true);
        grant(etcd, base + "/semaphore/", false);
        grant(etcd, EtcdKeys.SLOT_NAMESPACE + base + "/semaphore/", false);
        grant(etcd, EtcdKeys.LIMIT_NAMESPACE + base + "/semaphore", true);
        etcd.etcdctl("user", "add", "app:app-pw");
        etcd.etcdctl("user", "grant-role", "app", "app");
        etcd.enableAuth("root-pw");
    }

    private static Client app(String[] endpoints) {
        return Client.builder()
                .endpoints(endpoints)
                .user(APP)
                .password(APP_PW)
                .interceptor(EtcdDeadlines.unary(Duration.ofSeconds(5)))
                .build();
    }

    private static Client admin(String[] endpoints) {
        return Client.builder()
                .endpoints(endpoints)
                .user(ROOT)
                .password(ROOT_PW)
                .build();
    }

    @Test
    void asAUserWithOnlyTheDocumentedGrants() throws Exception {
        String base = "/test/rbac/" + UUID.randomUUID();
        String[] endpoints = PLAIN.cluster().endpoints().toArray(String[]::new);
        enableAuth(PLAIN.cluster(), base);
        try (Client admin = admin(endpoints)) {
            try (Client a = app(endpoints);
                    Client b = app(endpoints)) {
                coreCases(a, b, base);
                try (EtcdSession s = EtcdSession.open(a, Etcd.ttl(10));
                        LockService other = s.newLock(base + "/not-granted")) {
                    DiscoException e = assertThrows(DiscoException.class, () -> other.lock(WAIT));
                    assertInstanceOf(AccessDeniedException.class, e, e.toString());
                }

                // Read permission taken away while waiting, with nothing else changing: the wait fails within
                // about a request timeout with AccessDeniedException.
                EtcdOptions quick = Etcd.options(10, 2);
                try (EtcdSession sh = EtcdSession.open(a, quick);
                        EtcdSession sw = EtcdSession.open(b, quick);
                        LockService holder = sh.newLock(base + "/lock");
                        LockService waiter = sw.newLock(base + "/lock")) {
                    holder.lock(WAIT);
                    CompletableFuture<Grant> waiting = waiter.lockAsync();
                    Awaitility.await()
                            .atMost(WAIT)
                            .until(() -> admin.getKVClient()
                                            .get(
                                                    bytes(base + "/lock/"),
                                                    io.etcd.jetcd.options.GetOption.builder()
                                                            .isPrefix(true)
                                                            .withCountOnly(true)
                                                            .build())
                                            .get(5, SECONDS)
                                            .getCount()
                                    == 2);
                    long revoked = System.nanoTime();
                    revokeLockPermissions(PLAIN.cluster(), base);
                    PLAIN.cluster()
                            .etcdctl(
                                    "--user=root:root-pw",
                                    "role",
                                    "grant-permission",
                                    "app",
                                    "write",
                                    base + "/lock/",
                                    "--prefix");
                    java.util.concurrent.ExecutionException e =
                            assertThrows(java.util.concurrent.ExecutionException.class, () -> waiting.get(10, SECONDS));
                    long ms = (System.nanoTime() - revoked) / 1_000_000;
                    System.out.println(
                            "waiter whose read permission was taken away: " + e.getCause() + " after " + ms + " ms");
                    assertInstanceOf(AccessDeniedException.class, e.getCause());
                    assertTrue(ms < 2000 + 2000, "within about a request timeout (2 s): " + ms + " ms");
                    grant(PLAIN.cluster(), base + "/lock/", false, "--user=root:root-pw");
                    holder.unlock();
                }

                // Permission taken away while holding: the release fails, reported, and can be retried.
                try (EtcdSession s = EtcdSession.open(a, Etcd.ttl(10));
                        LockService lock = s.newLock(base + "/lock")) {
                    lock.lock(WAIT);
                    revokeLockPermissions(PLAIN.cluster(), base);
                    DiscoException e = assertThrows(DiscoException.class, lock::unlock);
                    assertInstanceOf(AccessDeniedException.class, e, e.toString());
                    assertTrue(lock.held().isPresent(), "still held: the release can be retried");
                    grant(PLAIN.cluster(), base + "/lock/", false, "--user=root:root-pw");
                    lock.unlock();
                    assertTrue(lock.held().isEmpty());
                }
            } finally {
                admin.getAuthClient().authDisable().get(5, SECONDS);
            }
        }
    }

    @Test
    void authTokensThatExpireDoNotStopWaitsWatchesOrRenewals() throws Exception {
        String base = "/test/token-ttl/" + UUID.randomUUID();
        try (EtcdCluster etcd = EtcdCluster.start(1, null, "--auth-token-ttl=2")) {
            String[] endpoints = etcd.endpoints().toArray(String[]::new);
            enableAuth(etcd, base);
            try (Client a = app(endpoints);
                    Client b = app(endpoints);
                    EtcdSession sa = EtcdSession.open(a, Etcd.ttl(3));
                    EtcdSession sb = EtcdSession.open(b, Etcd.ttl(3));
                    LockService holder = sa.newLock(base + "/lock");
                    LockService waiter = sb.newLock(base + "/lock")) {
                Grant first = holder.lock(WAIT);
                CompletableFuture<Grant> waiting = waiter.lockAsync();
                // Both clients' tokens expire (TTL 2 s) several times while the lock is held and the waiter waits.
                Awaitility.await()
                        .pollDelay(Duration.ofSeconds(6))
                        .atMost(Duration.ofSeconds(7))
                        .until(() -> true);
                assertTrue(
                        !sa.done().toCompletableFuture().isDone()
                                && !sb.done().toCompletableFuture().isDone(),
                        "renewals went on across expired tokens");
                holder.unlock();
                Grant second = waiting.get(10, SECONDS);
                assertTrue(second.token().isNewerThan(first.token()));
                waiter.unlock();
                assertTrue(holder.lock(WAIT).token().isNewerThan(second.token()), "a new acquisition after expiry");
                holder.unlock();
            }
        }
    }
}
