package io.disco.provider.etcd;

import static io.disco.provider.etcd.Etcd.keysUnder;
import static io.disco.provider.etcd.Etcd.ttl;
import static io.disco.provider.etcd.Etcd.uniquePrefix;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A timeout shorter than a round trip ({@code lock(1 ms)}) makes one real try, as {@code tryLock()} does: a free
 * lock is acquired, a held one times out with a {@link TimeoutException} (not "etcd could not be reached") and
 * leaves no key. Before, 20 of 20 such calls on a free lock threw "etcd could not be reached".
 */
class ShortTimeoutTest {

    @RegisterExtension
    static final EtcdWithClient ETCD = new EtcdWithClient();

    @Test
    void aTimeoutShorterThanARoundTripStillMakesOneRealTry() throws Exception {
        String prefix = uniquePrefix("short-timeout");
        try (EtcdSession mine = EtcdSession.open(ETCD.client(), ttl(10));
                EtcdSession theirs = EtcdSession.open(ETCD.client(), ttl(10));
                LockService lock = mine.newLock(prefix);
                LockService other = theirs.newLock(prefix)) {
            Grant last = null;
            for (int i = 0; i < 20; i++) {
                Grant g = lock.lock(Duration.ofMillis(1));
                assertTrue(last == null || g.token().isNewerThan(last.token()));
                last = g;
                lock.unlock();
            }
            other.lock(Duration.ofSeconds(5));
            for (int i = 0; i < 5; i++) {
                assertThrows(
                        TimeoutException.class, () -> lock.lock(Duration.ofMillis(1)), "held by another: a timeout");
            }
            assertTrue(keysUnder(ETCD.client(), prefix).size() == 1, "only the holder's key is left");
            other.unlock();
        }
    }
}
