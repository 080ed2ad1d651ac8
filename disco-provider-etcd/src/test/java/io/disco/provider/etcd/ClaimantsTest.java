package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.bytes;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Claimant.Mode;
import io.disco.core.Claimant.Role;
import io.disco.core.Primitive;
import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Holder metadata in the claims' values, and the listing of a name's holders and waiters (issue 34, item 8). */
class ClaimantsTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    private final List<EtcdSession> sessions = new ArrayList<>();

    @AfterEach
    void closeSessions() {
        sessions.forEach(EtcdSession::close);
    }

    private EtcdSession session(String clientId) {
        EtcdSession s = EtcdSession.open(
                ETCD.client(),
                EtcdOptions.builder()
                        .ttl(Duration.ofSeconds(10))
                        .requestTimeout(Duration.ofSeconds(10))
                        .clientId(clientId)
                        .build());
        sessions.add(s);
        return s;
    }

    /** Runs {@code call} on a new thread named {@code thread}, so the claim's metadata names it. */
    private static <T> T onThread(String thread, Callable<T> call) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        f.complete(call.call());
                    } catch (Throwable e) {
                        f.completeExceptionally(e);
                    }
                },
                thread);
        t.start();
        return f.get(20, SECONDS);
    }

    private static String etcdctlGet(String key) throws Exception {
        try (Etcdctl ctl = Etcdctl.start(ETCD.cluster().endpoint(0), "get", key, "--print-value-only")) {
            String line = ctl.nextLine(10_000);
            assertEquals(0, ctl.waitFor(10));
            return line;
        }
    }

    private static void assertMetadata(ClaimMetadata m, String clientId, String thread, Instant before) {
        assertEquals(ClaimMetadata.Source.DISCO, m.source(), m.toString());
        assertEquals(clientId, m.clientId());
        assertEquals(thread, m.thread());
        assertEquals(ProcessHandle.current().pid(), m.pid());
        assertFalse(m.host().isEmpty(), "host");
        Instant at = m.claimedAt().orElseThrow();
        assertFalse(at.isBefore(before.minusMillis(1)) || at.isAfter(Instant.now()), at + " not after " + before);
    }

    private static List<String> keys(List<Claimant> cs) {
        return cs.stream().map(Claimant::key).collect(Collectors.toList());
    }

    private static List<Role> roles(List<Claimant> cs) {
        return cs.stream().map(Claimant::role).collect(Collectors.toList());
    }

    /** Waits until the first session lists {@code n} claimants of {@code name}. */
    private void awaitClaimants(Primitive primitive, String name, int n) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sessions.get(0).claimants(primitive, name).size() == n);
    }

    @Test
    void aLockKeyCarriesItsHoldersMetadataAsJsonThatEtcdctlShows() throws Exception {
        String name = uniquePrefix("meta-lock-value");
        EtcdSession s = session("orders-7");
        LockService lock = s.newLock(name);
        Instant before = Instant.now();
        Grant g = onThread("order-worker-1", lock::lock);

        String shown = etcdctlGet(g.key());
        assertNotNull(shown, "etcdctl get printed nothing");
        assertTrue(shown.startsWith("{\"host\":"), shown);
        assertMetadata(ClaimMetadata.parse(shown), "orders-7", "order-worker-1", before);
    }

    @Test
    void theLockListingNamesTheHolderThenTheWaitersInOrderWithTokensAndMetadata() throws Exception {
        String name = uniquePrefix("meta-lock-list");
        Instant before = Instant.now();
        LockService a = session("a").newLock(name);
        LockService b = session("b").newLock(name);
        LockService c = session("c").newLock(name);
        Grant ga = onThread("thread-a", a::lock);
        CompletableFuture<Grant> gb = onThread("thread-b", b::lockAsync);
        awaitClaimants(Primitive.LOCK, name, 2);
        CompletableFuture<Grant> gc = onThread("thread-c", c::lockAsync);
        awaitClaimants(Primitive.LOCK, name, 3);

        List<Claimant> cs = sessions.get(2).claimants(Primitive.LOCK, name);
        assertEquals(
                List.of(
                        ga.key(),
                        name + "/" + EtcdSession.hex(sessions.get(1).leaseId()),
                        name + "/" + EtcdSession.hex(sessions.get(2).leaseId())),
                keys(cs));
        assertEquals(List.of(Role.HOLDER, Role.WAITER, Role.WAITER), roles(cs));
        assertEquals(List.of(0, 1, 2), cs.stream().map(Claimant::position).collect(Collectors.toList()));
        assertEquals(Optional.of(ga.token()), cs.get(0).token(), "an uncontended holder's token is its CreateRevision");
        assertEquals(Optional.empty(), cs.get(1).token());
        assertEquals(sessions.get(0).leaseId(), cs.get(0).leaseId());
        assertEquals(Mode.EXCLUSIVE, cs.get(0).mode());
        String[] ids = {"a", "b", "c"};
        for (int i = 0; i < 3; i++) {
            assertMetadata(cs.get(i).metadata(), ids[i], "thread-" + ids[i], before);
        }

        // b waited: its token is no CreateRevision; the library records it in the value, and the listing shows it.
        a.unlock();
        Grant bGrant = gb.get(10, SECONDS);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> sessions.get(0)
                        .claimants(Primitive.LOCK, name)
                        .get(0)
                        .token()
                        .isPresent());
        cs = sessions.get(0).claimants(Primitive.LOCK, name);
        assertEquals(bGrant.key(), cs.get(0).key());
        assertEquals(Optional.of(bGrant.token()), cs.get(0).token());
        assertMetadata(cs.get(0).metadata(), "b", "thread-b", before);
        assertEquals(Role.WAITER, cs.get(1).role());
        b.unlock();
        assertNotNull(gc.get(10, SECONDS));
        c.unlock();
        assertEquals(List.of(), sessions.get(0).claimants(Primitive.LOCK, name));
    }

    @Test
    void theReadWriteListingNamesReadersAndWritersWithTheirTokens() throws Exception {
        String name = uniquePrefix("meta-rw-list");
        Instant before = Instant.now();
        RWLockService r1 = session("r1").newRWLock(name);
        RWLockService r2 = session("r2").newRWLock(name);
        RWLockService w = session("w").newRWLock(name);
        RWLockService r3 = session("r3").newRWLock(name);
        RWGrant g1 = onThread("reader-1", r1::rLock);
        RWGrant g2 = onThread("reader-2", r2::rLock);
        assertEquals(g1.token(), g2.token());
        CompletableFuture<RWGrant> gw = onThread("writer", w::lockAsync);
        awaitClaimants(Primitive.RWLOCK, name, 3);
        CompletableFuture<RWGrant> g3 = onThread("reader-3", r3::rLockAsync);
        awaitClaimants(Primitive.RWLOCK, name, 4);

        List<Claimant> cs = sessions.get(0).claimants(Primitive.RWLOCK, name);
        assertEquals(List.of(Role.HOLDER, Role.HOLDER, Role.WAITER, Role.WAITER), roles(cs));
        assertEquals(
                List.of(Mode.SHARED, Mode.SHARED, Mode.EXCLUSIVE, Mode.SHARED),
                cs.stream().map(Claimant::mode).collect(Collectors.toList()));
        assertEquals(List.of(g1.key(), g2.key()), keys(cs.subList(0, 2)));
        assertTrue(cs.get(2).key().startsWith(name + "/write/"), cs.get(2).key());
        assertEquals(Optional.of(g1.token()), cs.get(0).token());
        assertEquals(Optional.of(g1.token()), cs.get(1).token());
        assertEquals(Optional.empty(), cs.get(2).token());
        String[] threads = {"reader-1", "reader-2", "writer", "reader-3"};
        String[] ids = {"r1", "r2", "w", "r3"};
        for (int i = 0; i < 4; i++) {
            assertMetadata(cs.get(i).metadata(), ids[i], threads[i], before);
        }

        r1.rUnlock();
        r2.rUnlock();
        RWGrant writer = gw.get(10, SECONDS);
        cs = sessions.get(0).claimants(Primitive.RWLOCK, name);
        assertEquals(writer.key(), cs.get(0).key());
        assertEquals(Role.HOLDER, cs.get(0).role());
        assertEquals(
                Optional.empty(), cs.get(0).token(), "a writer's token is kept nowhere in etcd, and is not recorded");
        assertEquals(Role.WAITER, cs.get(1).role());
        w.unlock();
        RWGrant third = g3.get(10, SECONDS);
        assertEquals(
                Optional.of(third.token()),
                sessions.get(0).claimants(Primitive.RWLOCK, name).get(0).token());
        r3.rUnlock();
    }

    @Test
    void theSemaphoreListingNamesHoldersWithTheirSlotTokensThenWaiters() throws Exception {
        String name = uniquePrefix("meta-sem-list");
        Instant before = Instant.now();
        SemaphoreService s1 = session("s1").newSemaphore(name, 2);
        SemaphoreService s2 = session("s2").newSemaphore(name, 2);
        SemaphoreService s3 = session("s3").newSemaphore(name, 2);
        Permit p1 = onThread("permit-1", s1::acquire);
        Permit p2 = onThread("permit-2", s2::acquire);
        CompletableFuture<Permit> p3 = onThread("permit-3", s3::acquireAsync);
        awaitClaimants(Primitive.SEMAPHORE, name, 3);

        List<Claimant> cs = sessions.get(1).claimants(Primitive.SEMAPHORE, name);
        assertEquals(List.of(Role.HOLDER, Role.HOLDER, Role.WAITER), roles(cs));
        assertEquals(List.of(p1.key(), p2.key()), keys(cs.subList(0, 2)));
        assertEquals(Optional.of(p1.token()), cs.get(0).token());
        assertEquals(Optional.of(p2.token()), cs.get(1).token());
        assertEquals(Optional.empty(), cs.get(2).token());
        for (int i = 0; i < 3; i++) {
            assertMetadata(cs.get(i).metadata(), "s" + (i + 1), "permit-" + (i + 1), before);
            assertEquals(Mode.SHARED, cs.get(i).mode());
        }
        s1.release();
        Permit third = p3.get(10, SECONDS);
        cs = sessions.get(0).claimants(Primitive.SEMAPHORE, name);
        assertEquals(List.of(p2.key(), third.key()), keys(cs));
        assertEquals(Optional.of(third.token()), cs.get(1).token());
    }

    @Test
    void anEtcdctlHolderIsListedWithEmptyMetadataAndAMalformedValueAsUnknown() throws Exception {
        String name = uniquePrefix("meta-foreign");
        try (Etcdctl ctl = Etcdctl.start(ETCD.cluster().endpoint(0), "lock", name)) {
            String key = ctl.nextLine(10_000);
            assertNotNull(key, "etcdctl did not acquire the lock");
            LockService java = session("java").newLock(name);
            CompletableFuture<Grant> waiting = onThread("java-waiter", java::lockAsync);
            awaitClaimants(Primitive.LOCK, name, 2);
            // A damaged value, in the queue behind both (its lease is Java's, so it goes with the session).
            ETCD.client()
                    .getKVClient()
                    .put(
                            bytes(name + "/zz-damaged"),
                            bytes("{\"host\":\"h\",\"pid\":"),
                            PutOption.builder()
                                    .withLeaseId(sessions.get(0).leaseId())
                                    .build())
                    .get(10, SECONDS);

            List<Claimant> cs = sessions.get(0).claimants(Primitive.LOCK, name);
            assertEquals(
                    List.of(key, name + "/" + EtcdSession.hex(sessions.get(0).leaseId()), name + "/zz-damaged"),
                    keys(cs));
            assertEquals(ClaimMetadata.EMPTY, cs.get(0).metadata());
            assertEquals("", cs.get(0).value());
            assertEquals(Role.HOLDER, cs.get(0).role());
            assertEquals(ClaimMetadata.Source.DISCO, cs.get(1).metadata().source());
            assertEquals(ClaimMetadata.UNKNOWN, cs.get(2).metadata());
            assertEquals("{\"host\":\"h\",\"pid\":", cs.get(2).value());

            ctl.interrupt();
            waiting.get(10, SECONDS);
        }
    }

    @Test
    void anElectionKeepsTheCandidatesValueAndListsItWithoutMetadata() throws Exception {
        String name = uniquePrefix("meta-election");
        ElectionService e1 = session("e1").newElection(name);
        ElectionService e2 = session("e2").newElection(name);
        Leadership l = e1.campaign("node-a");
        CompletableFuture<Leadership> second = e2.campaignAsync("node-b");
        awaitClaimants(Primitive.ELECTION, name, 2);

        assertEquals("node-a", etcdctlGet(l.key()));
        List<Claimant> cs = sessions.get(0).claimants(Primitive.ELECTION, name);
        assertEquals(
                List.of("node-a", "node-b"), cs.stream().map(Claimant::value).collect(Collectors.toList()));
        assertEquals(Optional.of(l.token()), cs.get(0).token());
        assertEquals(List.of(Role.HOLDER, Role.WAITER), roles(cs));
        assertEquals(ClaimMetadata.EMPTY, cs.get(0).metadata());
        e1.resign();
        Leadership next = second.get(10, SECONDS);
        assertEquals(
                Optional.of(next.token()),
                sessions.get(0).claimants(Primitive.ELECTION, name).get(0).token());
    }

    @Test
    void theListingRefusesBadArgumentsAndListsAnUnusedNameAsEmpty() {
        EtcdSession s = session("");
        assertEquals(List.of(), s.claimants(Primitive.SEMAPHORE, uniquePrefix("nobody")));
        org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class, () -> s.claimants(null, "/x"));
        org.junit.jupiter.api.Assertions.assertThrows(
                NullPointerException.class, () -> s.claimants(Primitive.LOCK, null));
        IllegalArgumentException blank = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> s.claimants(Primitive.LOCK, " "));
        assertTrue(blank.getMessage().contains("name"), blank.getMessage());
        IllegalArgumentException tooLong = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> EtcdOptions.builder().clientId("x".repeat(257)));
        assertTrue(tooLong.getMessage().contains("clientId"), tooLong.getMessage());
    }

    @Test
    void theListingOnlyReadsSoItWorksOnAClosedSession() throws Exception {
        String name = uniquePrefix("meta-closed");
        LockService holder = session("holder").newLock(name);
        Grant g = holder.lock();
        EtcdSession closed = session("closed");
        closed.close();
        List<Claimant> cs = closed.claimants(Primitive.LOCK, name);
        assertEquals(List.of(g.key()), keys(cs));
        assertEquals("holder", cs.get(0).metadata().clientId());
    }
}
