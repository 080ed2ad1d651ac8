package io.disco.testing.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.Disco;
import io.disco.fencing.FencingToken;
import io.disco.lock.FencedLock;
import io.disco.lock.LockLostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * What a client's lock holds beyond the plain {@code Lock} (issue 34, items 9 and later): a maximum hold time
 * per acquisition. Extend it with a {@link #backend()}.
 */
public abstract class ClientHoldsContract extends ContractSupport {

    @Test
    void aHoldPastItsMaximumHoldTimeIsReleasedAndReportedLost() throws Exception {
        String name = uniqueName("client-max-hold");
        Disco a = client(10);
        Disco b = client(10);
        FencedLock lock = a.lock(name).withMaxHold(Duration.ofMillis(500));
        lock.lock();
        FencingToken first = lock.token();
        assertEquals(1, keys(name).size());
        lock.done().toCompletableFuture().get(5, TimeUnit.SECONDS); // the maximum hold time passed
        assertKeys(name);
        assertTrue(lock.err().orElseThrow() instanceof LockLostException);

        FencedLock theirs = b.lock(name);
        assertTrue(theirs.tryLock(5, TimeUnit.SECONDS), "another client acquires at once");
        FencingToken second = theirs.token();
        assertTrue(second.isNewerThan(first), first + " then " + second);
        theirs.unlock();

        assertThrows(LockLostException.class, lock::token, "the first holder's token is stale");
        assertTrue(lock.isHeldByCurrentThread(), "held locally until it unlocks, as after a lost lease");
        LockLostException e = assertThrows(LockLostException.class, lock::unlock);
        assertTrue(e.getMessage().contains("maximum hold time"), e.getMessage());
        assertFalse(lock.isHeldByCurrentThread());
        assertKeys(name);

        FencedLock plain = a.lock(name); // the name works again, with no maximum hold
        assertTrue(plain.tryLock(5, TimeUnit.SECONDS));
        assertTrue(plain.token().isNewerThan(second));
        assertTrue(plain.withMaxHold(Duration.ofMillis(200)).tryLock(), "a nested hold through a view");
        Awaitility.await().pollInSameThread().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(3))
                .until(() -> keys(name).size() == 1 && plain.err().isEmpty());
        plain.unlock();
        plain.token(); // the first hold had no maximum hold time, and the nested one did not add one
        plain.unlock();
        assertKeys(name);

        assertThrows(NullPointerException.class, () -> plain.withMaxHold(null));
        assertThrows(IllegalArgumentException.class, () -> plain.withMaxHold(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> plain.withMaxHold(Duration.ofMillis(-1)));
    }

    @Test
    void aHoldReleasedBeforeItsMaximumHoldTimeIsNotTouchedByIt() throws Exception {
        String name = uniqueName("client-max-hold-released");
        Disco a = client(10);
        FencedLock lock = a.lock(name).withMaxHold(Duration.ofMillis(300));
        assertTrue(lock.tryLock());
        FencingToken first = lock.token();
        lock.unlock();
        FencedLock plain = a.lock(name);
        plain.lock();
        try {
            Awaitility.await().pollInSameThread().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(3))
                    .until(() -> keys(name).size() == 1 && plain.err().isEmpty());
            assertTrue(plain.token().isNewerThan(first));
        } finally {
            plain.unlock();
        }
        assertEquals(List.of(), keys(name));
    }
}
