package io.disco.provider.zookeeper;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.core.ClaimMetadata;
import io.disco.core.Claimant;
import io.disco.core.Claimant.Mode;
import io.disco.core.Claimant.Role;
import io.disco.core.Primitive;
import io.disco.rwlock.RWGrant;
import io.disco.rwlock.RWLockService;
import io.disco.semaphore.Permit;
import io.disco.semaphore.SemaphoreService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ZooKeeper listing of claimants beyond the kit's lock and election ({@code ClientHoldsContract}): a
 * read/write lock's readers share the phase token and a writer behind them waits; a semaphore's holders carry
 * their slot tokens and a waiter none; a plain {@code InterProcessMutex} holder is listed with its czxid as the
 * token and metadata that is not this library's.
 */
class ZkClaimantsTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ZooKeeperSession session() {
        CuratorFramework c = ZkContractBackend.client(ZK.connectString(), 10_000);
        open.add(c);
        ZooKeeperSession s = ZooKeeperSession.open(c, ZkContractBackend.options());
        open.add(s);
        return s;
    }

    private static String path(String what) {
        return "/claimants/" + what + "/" + UUID.randomUUID();
    }

    @Test
    void readersShareThePhaseTokenAndAWriterWaitsBehindThem() throws Exception {
        String path = path("rwlock");
        ZooKeeperSession a = session();
        ZooKeeperSession b = session();
        ZooKeeperSession w = session();
        RWLockService ra = a.newRWLock(path);
        RWLockService rb = b.newRWLock(path);
        RWLockService writer = w.newRWLock(path);
        RWGrant first = ra.rLock(Duration.ofSeconds(5));
        RWGrant second = rb.rLock(Duration.ofSeconds(5));
        CompletableFuture<RWGrant> writing = writer.lockAsync();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> a.claimants(Primitive.RWLOCK, path).size() == 3);

        List<Claimant> cs = w.claimants(Primitive.RWLOCK, path);
        assertEquals(
                List.of(first.key(), second.key()),
                cs.subList(0, 2).stream().map(Claimant::key).toList());
        for (int i = 0; i < 2; i++) {
            assertEquals(Role.HOLDER, cs.get(i).role());
            assertEquals(Mode.SHARED, cs.get(i).mode());
            assertEquals(i, cs.get(i).position());
            assertEquals(Optional.of(first.token()), cs.get(i).token(), "one phase, one token");
            assertEquals(
                    Thread.currentThread().getName(),
                    cs.get(i).madeByDisco().orElseThrow().thread());
        }
        assertEquals(a.sessionId(), cs.get(0).leaseId());
        assertEquals(b.sessionId(), cs.get(1).leaseId());
        Claimant waiting = cs.get(2);
        assertEquals(Role.WAITER, waiting.role());
        assertEquals(Mode.EXCLUSIVE, waiting.mode());
        assertTrue(waiting.token().isEmpty());
        assertEquals(w.sessionId(), waiting.leaseId());

        ra.rUnlock();
        rb.rUnlock();
        RWGrant wrote = writing.get(10, TimeUnit.SECONDS);
        cs = a.claimants(Primitive.RWLOCK, path);
        assertEquals(1, cs.size(), cs.toString());
        assertEquals(wrote.key(), cs.get(0).key());
        assertEquals(Optional.of(wrote.token()), cs.get(0).token(), "the writer's token: its node's mzxid");
        assertTrue(cs.get(0).madeByDisco().isPresent(), "the writer's admission kept its metadata");
        writer.unlock();
        assertEquals(List.of(), a.claimants(Primitive.RWLOCK, path));
    }

    @Test
    void semaphoreHoldersCarryTheirSlotTokensAndAWaiterNone() throws Exception {
        String path = path("semaphore");
        ZooKeeperSession a = session();
        ZooKeeperSession b = session();
        ZooKeeperSession c = session();
        SemaphoreService sa = a.newSemaphore(path, 2);
        SemaphoreService sb = b.newSemaphore(path, 2);
        SemaphoreService sc = c.newSemaphore(path, 2);
        Permit pa = sa.acquire(Duration.ofSeconds(5));
        Permit pb = sb.acquire(Duration.ofSeconds(5));
        CompletableFuture<Permit> waiting = sc.acquireAsync();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> a.claimants(Primitive.SEMAPHORE, path).size() == 3);

        List<Claimant> cs = c.claimants(Primitive.SEMAPHORE, path);
        assertEquals(
                List.of(pa.key(), pb.key()),
                cs.subList(0, 2).stream().map(Claimant::key).toList());
        assertEquals(Optional.of(pa.token()), cs.get(0).token());
        assertEquals(Optional.of(pb.token()), cs.get(1).token());
        assertEquals(
                List.of(Role.HOLDER, Role.HOLDER, Role.WAITER),
                cs.stream().map(Claimant::role).toList());
        assertTrue(cs.get(2).token().isEmpty());
        assertEquals(c.sessionId(), cs.get(2).leaseId());
        assertTrue(cs.stream()
                .allMatch(x -> x.mode() == Mode.SHARED && x.madeByDisco().isPresent()));

        sa.release();
        Permit pc = waiting.get(10, TimeUnit.SECONDS);
        cs = a.claimants(Primitive.SEMAPHORE, path);
        assertEquals(List.of(pb.key(), pc.key()), cs.stream().map(Claimant::key).toList());
        assertEquals(Optional.of(pc.token()), cs.get(1).token());
        sb.release();
        sc.release();
    }

    @Test
    void aCuratorHolderIsListedWithItsCzxidAndForeignMetadata() throws Exception {
        String path = path("curator");
        ZooKeeperSession a = session();
        InterProcessMutex curator = new InterProcessMutex(ZK.admin(), path);
        assertTrue(curator.acquire(5, TimeUnit.SECONDS));
        try {
            List<Claimant> cs = a.claimants(Primitive.LOCK, path);
            assertEquals(1, cs.size(), cs.toString());
            Claimant holder = cs.get(0);
            String node = ZK.backend().keys(path).get(0);
            assertEquals(node, holder.key());
            assertEquals(
                    Optional.of(io.disco.fencing.FencingToken.of(
                            ZK.admin().checkExists().forPath(node).getCzxid())),
                    holder.token());
            assertEquals(ZK.admin().getZookeeperClient().getZooKeeper().getSessionId(), holder.leaseId());
            assertTrue(holder.madeByDisco().isEmpty(), "Curator writes its client's address, not this library's JSON");
            assertTrue(holder.metadata().source() != ClaimMetadata.Source.DISCO);
        } finally {
            curator.release();
        }
    }
}
