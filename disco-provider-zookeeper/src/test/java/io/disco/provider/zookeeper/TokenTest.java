package io.disco.provider.zookeeper;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.client.DiscoBackend;
import io.disco.lock.Grant;
import io.disco.lock.LockService;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Why the token is the czxid and not the sequence number: the sequence restarts when the lock's parent is
 * deleted (ZooKeeper deletes Curator's empty container parents on its sweep; here an operator does it at once),
 * so a new owner's sequence is below an earlier owner's, while its czxid is above.
 */
class TokenTest {

    @RegisterExtension
    static final ZkContractBackend ZK = new ZkContractBackend();

    private DiscoBackend.Owner owner;

    @AfterEach
    void close() {
        if (owner != null) {
            owner.close();
        }
    }

    @Test
    void theTokenKeepsGrowingWhenTheSequenceRestartsWithANewParent() throws Exception {
        String path = "/token/lock/" + UUID.randomUUID();
        owner = ZK.backend().open(Duration.ofSeconds(10));
        LockService lock = owner.newLock(path);
        Grant earlier = null;
        for (int i = 0; i < 3; i++) { // sequences 0, 1, 2
            earlier = lock.lock();
            lock.unlock();
        }
        ZK.admin().delete().forPath(path); // the empty parent goes, as the container sweep would delete it
        Grant later = lock.lock();
        long earlierSequence = Long.parseLong(NodeKind.sequence(NodeKind.name(earlier.key())));
        long laterSequence = Long.parseLong(NodeKind.sequence(NodeKind.name(later.key())));
        assertTrue(
                laterSequence < earlierSequence, "the sequence restarted: " + earlier.key() + " then " + later.key());
        assertTrue(
                later.token().isNewerThan(earlier.token()),
                "the token (czxid) still grows: " + earlier.token() + " then " + later.token());
    }
}
