package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockLostException;
import io.disco.lock.LockService;
import io.disco.testservers.EtcdExtension;
import io.disco.testservers.RpcCounter;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every real loss is reported, and only real losses are: the own-key watch follows every incarnation of
 * the key; a lease that only this process believes lost is revoked on close(); a grant whose answer came
 * late is no loss. That a held key deleted by somebody else, or a lease revoked under a release, is a loss
 * is the contract kit's ({@code LockContract}, {@code ElectionContract}).
 */
class LossReportTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    /**
     * The own-key watch outlives a grant and follows the owner's next incarnation of its key: a hot
     * loop opens one watch, not one per acquisition, and a key deleted by somebody else after the
     * re-acquisition is still a loss. A watch that follows nothing is closed after its linger.
     */
    @Test
    void theOwnKeyWatchFollowsEveryIncarnationOfTheKey() throws Exception {
        String prefix = uniquePrefix("reacquired-lock");
        RpcCounter counter = new RpcCounter();
        try (Client client = Client.builder()
                        .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                        .interceptor(counter)
                        .build();
                LockService lock = EtcdProvider.newLock(client, prefix, Etcd.ttl(30))) {
            long before = counter.watchCreates();
            for (int i = 0; i < 50; i++) {
                lock.lock();
                lock.unlock();
            }
            long creates = counter.watchCreates() - before;
            System.out.printf("own-key watches created by 50 lock+unlock cycles: %d%n", creates);
            assertTrue(creates <= 2, "one watch for the loop (and one more if a liveness probe moved it): " + creates);
            // a watch that followed nothing for its linger is closed: no watch stream stays open
            assertTrue(counter.open("Watch") > 0, "the watch lingers after the last release");
            // closed after its linger; the bound leaves room for a loaded machine (3 x linger was missed at load 27)
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofMillis(OwnKeyWatch.LINGER_MS).plusSeconds(10))
                    .until(() -> counter.open("Watch") == 0);
            Grant g = lock.lock(); // opens a watch again
            lock.unlock();
            Grant again = lock.lock(); // follows its new incarnation on the watch the previous one opened
            assertTrue(again.token().value() > g.token().value());
            client.getKVClient().delete(Etcd.bytes(again.key())).get(5, SECONDS);
            lock.done().toCompletableFuture().get(1, SECONDS);
            assertInstanceOf(LockLostException.class, lock.err().orElseThrow());
            assertThrows(LockLostException.class, lock::unlock);
        }
    }

    @Test
    void closeRevokesALeaseThatOnlyThisProcessBelievesLost() throws Exception {
        String prefix = uniquePrefix("local-loss-revoke");
        // Renewals reach etcd and are applied; their answers never come back: the session declares
        // its lease lost after the TTL while etcd keeps it alive, with its key.
        try (DelayingInterceptor renewals = new DelayingInterceptor("LeaseKeepAlive");
                Client client = Client.builder()
                        .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                        .interceptor(renewals)
                        .build();
                Client observer = Etcd.client(ETCD.cluster())) {
            LockService lock = EtcdProvider.newLock(client, prefix, Etcd.options(3, 2));
            Grant g = lock.lock();
            renewals.drop(true);
            lock.done().toCompletableFuture().get(10, SECONDS);
            assertEquals(List.of(g.key()), keysUnder(observer, prefix), "etcd still holds the key: the loss is local");
            long closing = System.nanoTime();
            lock.close();
            assertEquals(List.of(), keysUnder(observer, prefix), "close() revoked the lease");
            System.out.printf("local loss: key gone %d ms after close()%n", (System.nanoTime() - closing) / 1_000_000);
            long ttl = observer.getLeaseClient()
                    .timeToLive(
                            Long.parseLong(g.key().substring(g.key().lastIndexOf('/') + 1), 16), LeaseOption.DEFAULT)
                    .get(5, SECONDS)
                    .getTTL();
            assertEquals(-1, ttl, "the lease is revoked");
        }
    }

    @Test
    void aGrantAnsweredLateIsNoLoss() throws Exception {
        String prefix = uniquePrefix("slow-grant");
        // The lease grant is answered 1.5 s after it was applied, of a 2 s TTL: less than one renewal
        // interval of validity is left when the session opens. It must renew at once, and the first
        // lock must be granted only with the grant margin of validity, not lost a moment later.
        try (DelayingInterceptor grants = new DelayingInterceptor("LeaseGrant").delay(1500);
                Client client = Client.builder()
                        .endpoints(ETCD.cluster().endpoints().toArray(String[]::new))
                        .interceptor(grants)
                        .build();
                EtcdSession session = EtcdSession.open(
                        client, EtcdOptions.builder().ttl(Duration.ofSeconds(2)).build())) {
            LockService lock = session.newLock(prefix);
            Grant g = lock.lock(Duration.ofSeconds(5));
            CompletableFuture<Void> done = lock.done().toCompletableFuture();
            assertThrows(TimeoutException.class, () -> done.get(2500, MILLISECONDS), "no loss: " + lock.err());
            assertEquals(g, lock.held().orElseThrow());
            lock.unlock();
            assertTrue(session.err().isEmpty());
        }
    }
}
