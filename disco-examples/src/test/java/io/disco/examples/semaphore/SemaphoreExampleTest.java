package io.disco.examples.semaphore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.examples.semaphore.basic.SemaphoreExample;
import io.disco.testservers.EtcdExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SemaphoreExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void twoHoldersWriteSideBySideAndTheFrozenWorkerIsRejectedOnItsSlot() {
        assertEquals(
                "VERDICT semaphore/basic: two holders wrote side by side, the frozen worker's write was rejected"
                        + " on its reassigned slot — OK",
                SemaphoreExample.run(ETCD.cluster().endpoints(), "/test/examples/semaphore", Duration.ofSeconds(2))
                        .line());
    }
}
