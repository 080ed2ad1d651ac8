package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.election.ElectionService;
import io.disco.election.Leadership;
import io.disco.election.Observation;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.testservers.EtcdExtension;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Java and real Go programs on the same names: etcd's own {@code concurrency.Mutex},
 * {@code concurrency.Election} and {@code recipes.RWMutex} (etcd 3.4, Debian's
 * {@code golang-etcd-server-dev}) exclude this library's owners and are excluded by them, both
 * ways, and a mixed queue keeps its order. Nothing is left under the name afterwards.
 */
class GoInteropTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    private static final Duration WAITING = Duration.ofMillis(400);
    private static final Duration SOON = Duration.ofSeconds(5);
    private static Client client;

    @BeforeAll
    static void connect() {
        client = Etcd.client(ETCD.cluster());
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    private static GoRecipes go() throws Exception {
        return GoRecipes.start(ETCD.cluster().endpoints(), 30);
    }

    /** Asserts that {@code f} is still waiting after a while (bounded), then that nothing is left over. */
    private static void assertWaiting(CompletableFuture<?> f) {
        // a negative check: nothing may happen at any moment of this time
        await("must still wait").during(WAITING).atMost(WAITING.plusSeconds(2)).until(() -> !f.isDone());
        assertFalse(f.isDone(), "must still wait");
    }

    @Test
    void mutexGoHoldsJavaWaits() throws Exception {
        String name = uniquePrefix("go-mutex-a");
        try (GoRecipes go = go();
                LockService java = EtcdProvider.newLock(client, name, ttl(30))) {
            long goRev = GoRecipes.revision(go.send("lock " + name).expect("locked", SOON));
            CompletableFuture<Grant> waiting = java.lockAsync();
            assertWaiting(waiting);
            go.send("unlock").expect("unlocked", SOON);
            Grant g = waiting.get(5, SECONDS);
            assertTrue(g.token().value() > goRev, "the Java owner's token exceeds the Go owner's revision");
            java.unlock();
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    /** Go's keys carry an empty value: the listing shows them with empty metadata, beside Java's. */
    @Test
    void goHoldersAreListedWithEmptyMetadata() throws Exception {
        String name = uniquePrefix("go-listed");
        try (GoRecipes goWriter = go();
                GoRecipes goMutex = go();
                EtcdSession s = EtcdSession.open(client, ttl(30))) {
            RWLockService reader = s.newRWLock(name);
            goWriter.send("wlock " + name).expect("wlocked", SOON);
            CompletableFuture<RWGrant> r = reader.rLockAsync();
            await().atMost(SOON)
                    .until(() ->
                            s.claimants(io.disco.core.Primitive.RWLOCK, name).size() == 2);
            List<io.disco.core.Claimant> cs = s.claimants(io.disco.core.Primitive.RWLOCK, name);
            assertEquals(io.disco.core.ClaimMetadata.EMPTY, cs.get(0).metadata());
            assertEquals(io.disco.core.Claimant.Role.HOLDER, cs.get(0).role());
            assertEquals(io.disco.core.Claimant.Mode.EXCLUSIVE, cs.get(0).mode());
            assertEquals(java.util.Optional.empty(), cs.get(0).token(), "a Go writer has no token");
            assertEquals(
                    io.disco.core.ClaimMetadata.Source.DISCO,
                    cs.get(1).metadata().source());
            assertEquals(io.disco.core.Claimant.Role.WAITER, cs.get(1).role());
            goWriter.send("wunlock").expect("wunlocked", SOON);
            r.get(5, SECONDS);
            reader.rUnlock();

            String lockName = uniquePrefix("go-listed-mutex");
            long goRev = GoRecipes.revision(goMutex.send("lock " + lockName).expect("locked", SOON));
            List<io.disco.core.Claimant> held = s.claimants(io.disco.core.Primitive.LOCK, lockName);
            assertEquals(1, held.size());
            assertEquals(io.disco.core.ClaimMetadata.EMPTY, held.get(0).metadata());
            assertEquals(goRev, held.get(0).token().orElseThrow().value(), "an uncontended Go holder's revision");
            goMutex.send("unlock").expect("unlocked", SOON);
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void mutexJavaHoldsGoWaits() throws Exception {
        String name = uniquePrefix("go-mutex-b");
        try (GoRecipes go = go();
                LockService java = EtcdProvider.newLock(client, name, ttl(30))) {
            Grant g = java.lock();
            go.send("lock " + name);
            go.expectNothing(WAITING);
            java.unlock();
            assertTrue(GoRecipes.revision(go.expect("locked", SOON)) > g.token().value());
            go.send("unlock").expect("unlocked", SOON);
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void electionBothWays() throws Exception {
        String name = uniquePrefix("go-election");
        List<String> seenByJava = new CopyOnWriteArrayList<>();
        try (GoRecipes goLeader = go();
                GoRecipes goObserver = go();
                GoRecipes goCandidate = go();
                ElectionService java = EtcdProvider.newElection(client, name, ttl(30));
                ElectionService javaObserver = EtcdProvider.newElection(client, name, ttl(30));
                Observation obs = javaObserver.observe(l -> seenByJava.add(l.value()))) {
            long goRev = GoRecipes.revision(
                    goLeader.send("campaign " + name + " go-1").expect("elected", SOON));
            await().atMost(SOON).until(() -> seenByJava.contains("go-1"));
            assertEquals("go-1", java.leader().orElseThrow().value());
            goLeader.send("proclaim go-2").expect("proclaimed", SOON);
            await().atMost(SOON).until(() -> seenByJava.contains("go-2"));

            CompletableFuture<Leadership> campaign = java.campaignAsync("java-1");
            assertWaiting(campaign);
            goObserver.send("observe " + name).expect("observing", SOON);
            assertEquals("leader go-2 " + goRev, goObserver.expect("leader", SOON));
            goLeader.send("resign").expect("resigned", SOON);
            Leadership l = campaign.get(5, SECONDS);
            assertTrue(l.token().value() > goRev, "the Java leader's token exceeds the Go leader's revision");
            assertEquals("leader java-1 " + l.token().value(), goObserver.expect("leader", SOON));
            java.proclaim("java-2");
            assertEquals("leader java-2 " + l.token().value(), goObserver.expect("leader", SOON));

            goCandidate.send("campaign " + name + " go-3");
            goCandidate.expectNothing(WAITING);
            java.resign();
            assertTrue(GoRecipes.revision(goCandidate.expect("elected", SOON))
                    > l.token().value());
            await().atMost(SOON).until(() -> seenByJava.contains("go-3"));
            assertEquals(
                    List.of("go-1", "go-2", "java-1", "java-2", "go-3"), seenByJava, "every term and value, in order");
            goCandidate.send("resign").expect("resigned", SOON);
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void javaReadersReleaseAndAGoWriterIsAdmittedWithinASecond() throws Exception {
        String name = uniquePrefix("go-rw-a");
        try (GoRecipes goWriter = go();
                RWLockService r1 = EtcdProvider.newRWLock(client, name, ttl(30));
                RWLockService r2 = EtcdProvider.newRWLock(client, name, ttl(30))) {
            r1.rLock();
            r2.rLock();
            goWriter.send("wlock " + name);
            goWriter.expectNothing(WAITING);
            r1.rUnlock();
            goWriter.expectNothing(WAITING);
            long released = System.nanoTime();
            r2.rUnlock();
            goWriter.expect("wlocked", Duration.ofSeconds(1));
            System.out.printf(
                    "Go writer admitted %d ms after the last Java reader released%n",
                    (System.nanoTime() - released) / 1_000_000);
            goWriter.send("wunlock").expect("wunlocked", SOON);
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void aGoWriterHoldsAndJavaReadersAreAdmittedTogether() throws Exception {
        String name = uniquePrefix("go-rw-b");
        try (GoRecipes goWriter = go();
                RWLockService r1 = EtcdProvider.newRWLock(client, name, ttl(30));
                RWLockService r2 = EtcdProvider.newRWLock(client, name, ttl(30))) {
            goWriter.send("wlock " + name).expect("wlocked", SOON);
            CompletableFuture<RWGrant> a = r1.rLockAsync();
            CompletableFuture<RWGrant> b = r2.rLockAsync();
            assertWaiting(a);
            assertFalse(b.isDone());
            goWriter.send("wunlock").expect("wunlocked", SOON);
            assertEquals(a.get(5, SECONDS).token(), b.get(5, SECONDS).token(), "readers of one phase share a token");
            r1.rUnlock();
            r2.rUnlock();
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void aJavaWriterAndGoReadersExcludeEachOther() throws Exception {
        String name = uniquePrefix("go-rw-c");
        try (GoRecipes goReader1 = go();
                GoRecipes goReader2 = go();
                RWLockService writer = EtcdProvider.newRWLock(client, name, ttl(30))) {
            writer.lock();
            goReader1.send("rlock " + name);
            goReader2.send("rlock " + name);
            goReader1.expectNothing(WAITING);
            goReader2.expectNothing(Duration.ZERO);
            writer.unlock();
            goReader1.expect("rlocked", SOON);
            goReader2.expect("rlocked", SOON);
            CompletableFuture<RWGrant> w = writer.lockAsync();
            assertWaiting(w);
            goReader1.send("runlock").expect("runlocked", SOON);
            assertWaiting(w);
            goReader2.send("runlock").expect("runlocked", SOON);
            w.get(5, SECONDS);
            writer.unlock();
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    @Test
    void aMixedQueueKeepsItsOrderAndAGoWriterDoesNotEndAReadPhase() throws Exception {
        String name = uniquePrefix("go-rw-d");
        try (GoRecipes goWriter = go();
                RWLockService r1 = EtcdProvider.newRWLock(client, name, ttl(30));
                RWLockService r2 = EtcdProvider.newRWLock(client, name, ttl(30))) {
            RWGrant first = r1.rLock();
            goWriter.send("wlock " + name);
            await().atMost(SOON).until(() -> keysUnder(client, name).size() == 2); // the Go writer is queued
            CompletableFuture<RWGrant> second = r2.rLockAsync(); // behind the Go writer, not beside the reader
            assertWaiting(second);
            r1.rUnlock();
            goWriter.expect("wlocked", SOON);
            assertFalse(second.isDone(), "the reader queued behind the Go writer waits for it");
            goWriter.send("wunlock").expect("wunlocked", SOON);
            RWGrant later = second.get(5, SECONDS);
            assertEquals(first.token(), later.token(), "a Go writer carries no token and does not end the read phase");
            r2.rUnlock();
        }
        assertEquals(List.of(), keysUnder(client, name));
    }

    /** After every way of releasing, nothing of the released owner is left under the name; the other holders' keys are. */
    @Test
    void releasesLeaveOnlyTheOtherHoldersKeys() throws Exception {
        String name = uniquePrefix("released");
        try (EtcdSession a = EtcdSession.open(client, ttl(30));
                EtcdSession b = EtcdSession.open(client, ttl(30))) {
            String aRead = name + "/read/" + EtcdSession.hex(a.leaseId());
            String bRead = name + "/read/" + EtcdSession.hex(b.leaseId());
            RWLockService ra = a.newRWLock(name);
            RWLockService rb = b.newRWLock(name);
            ra.rLock();
            rb.rLock();
            ra.rUnlock();
            assertEquals(List.of(bRead), keysUnder(client, name), "rUnlock() leaves the other reader only");
            ra.lockAsync();
            await().atMost(SOON).until(() -> keysUnder(client, name).size() == 2);
            rb.close();
            await().atMost(SOON).until(() -> ra.held().isPresent());
            assertEquals(
                    List.of(name + "/write/" + EtcdSession.hex(a.leaseId())),
                    keysUnder(client, name),
                    "close() leaves the writer only");
            ra.unlock();
            assertEquals(List.of(), keysUnder(client, name), "unlock() leaves nothing");
            assertFalse(keysUnder(client, name).contains(aRead));

            String lockName = name + "-lock";
            LockService la = a.newLock(lockName);
            LockService lb = b.newLock(lockName);
            la.lock();
            CompletableFuture<Grant> waiting = lb.lockAsync();
            await().atMost(SOON).until(() -> keysUnder(client, lockName).size() == 2);
            la.unlock();
            waiting.get(5, SECONDS);
            assertEquals(List.of(lockName + "/" + EtcdSession.hex(b.leaseId())), keysUnder(client, lockName));
            lb.close();
            assertEquals(List.of(), keysUnder(client, lockName));

            String electionName = name + "-election";
            ElectionService ea = a.newElection(electionName);
            ElectionService eb = b.newElection(electionName);
            ea.campaign("a");
            CompletableFuture<Leadership> next = eb.campaignAsync("b");
            await().atMost(SOON).until(() -> keysUnder(client, electionName).size() == 2);
            ea.resign();
            next.get(5, SECONDS);
            assertEquals(List.of(electionName + "/" + EtcdSession.hex(b.leaseId())), keysUnder(client, electionName));
            eb.close();
            assertEquals(List.of(), keysUnder(client, electionName));
        }
    }
}
