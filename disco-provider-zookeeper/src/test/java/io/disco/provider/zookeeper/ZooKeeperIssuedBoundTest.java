package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.fencing.FencingToken;
import io.disco.fencing.guard.Guard;
import io.disco.fencing.guard.TokenNotIssuedException;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import io.disco.testing.contract.ContractOwner;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The guard's bound on ZooKeeper: the zxid of a write, above every token issued before it, so a guard built with it
 * takes a real owner's token and refuses one that nobody issued.
 */
class ZooKeeperIssuedBoundTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    @Test
    void theBoundIsAboveEveryIssuedTokenAndAGuardRefusesAForgedOne() throws Exception {
        String path = "/bound/" + UUID.randomUUID();
        ZooKeeperIssuedBound bound = ZooKeeperIssuedBound.of(ZK.admin(), path + "/probe");
        try (ContractOwner owner = ZK.newOwner(Duration.ofSeconds(10)); LockService lock = owner.newLock(path + "/lock")) {
            Grant g = lock.lock(Duration.ofSeconds(5));
            FencingToken first = bound.current().toCompletableFuture().get(5, TimeUnit.SECONDS); // creates the probe node
            assertTrue(first.isNewerThan(g.token()), g.token() + " then the bound " + first);
            FencingToken second = bound.current().toCompletableFuture().get(5, TimeUnit.SECONDS);
            assertTrue(second.isNewerThan(first), first + " then " + second);

            Guard guard = Guard.builder().issuedBound(bound).build();
            guard.check(g.token());
            assertEquals(g.token(), guard.highWater().orElseThrow());
            assertThrows(TokenNotIssuedException.class, () -> guard.check(FencingToken.of(Long.MAX_VALUE)));
            assertEquals(g.token(), guard.highWater().orElseThrow(), "the forged token left the mark alone");
            lock.unlock();
        }
    }
}
