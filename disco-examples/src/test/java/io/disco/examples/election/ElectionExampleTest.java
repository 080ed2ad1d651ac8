package io.disco.examples.election;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.election.basic.ElectionExample;
import io.disco.testing.EtcdExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ElectionExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void failoverIsObservedAndTheStaleLeaderIsRejected() {
        ElectionExample.Outcome o = ElectionExample.run(ETCD.cluster().endpoints(), "/test/examples/election",
                Duration.ofSeconds(2));
        assertNull(o.failure());
        assertTrue(o.tokenB().isNewerThan(o.tokenA()), o.tokenA() + " then " + o.tokenB());
        assertTrue(o.writesAccepted());
        assertTrue(o.observerSawFailover());
        assertTrue(o.zombieRejected());
        assertTrue(o.verdict().ok(), o.verdict().line());
    }
}
