package io.disco.examples.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.disco.examples.Verdict;
import io.disco.examples.election.basic.ElectionExample;
import io.disco.examples.election.runner.RunnerExample;
import io.disco.testservers.EtcdExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ElectionExampleTest {

    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.singleMember();

    @Test
    void failoverIsObservedAndTheStaleLeaderIsRejected() {
        ElectionExample.Outcome o =
                ElectionExample.run(ETCD.cluster().endpoints(), "/test/examples/election", Duration.ofSeconds(2));
        assertNull(o.failure());
        assertTrue(o.tokenB().isNewerThan(o.tokenA()), o.tokenA() + " then " + o.tokenB());
        assertTrue(o.writesAccepted());
        assertTrue(o.observerSawFailover());
        assertTrue(o.zombieRejected());
        assertTrue(o.verdict().ok(), o.verdict().line());
    }

    @Test
    void runnersRunTheirTaskOnlyWhileLeadingHandOverAndHeal() {
        Verdict v = RunnerExample.run(ETCD.cluster().endpoints(), "/test/examples/election-runner");
        assertEquals(
                "VERDICT election/runner: tasks ran only while leading, hand-over and heal with rising tokens,"
                        + " stale write rejected — OK",
                v.line());
    }
}
