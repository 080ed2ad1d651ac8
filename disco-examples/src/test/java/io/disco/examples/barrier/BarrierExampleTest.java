package io.disco.examples.barrier;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.disco.testservers.EtcdExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The {@code barrier/basic} scenario on a real single-member etcd: it passes. */
class BarrierExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void theWorkersWaitForTheMigrationAndTheBatchEntersAndLeavesTogether() {
        assertEquals(
                "VERDICT barrier/basic: no worker started before the migrator lowered the barrier; the double barrier"
                        + " let the three in only once the third entered and out only once the last left — OK",
                BarrierExample.run(ETCD.cluster().endpoints(), "/test/examples/barrier")
                        .line());
    }
}
