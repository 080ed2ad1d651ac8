package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The short run of the lock workload that the README test command includes: zero safety failures
 * under faults; and the same suite against a resource that ignores tokens must fail, which shows
 * the checkers can.
 */
class ChaosTest {

    private static final long SEED = 20261204L;

    @Test
    void theLockWorkloadKeepsTheFencingContractUnderFaults() throws Exception {
        Chaos.Result r = Chaos.run(new Chaos.Options(40, SEED, 4, 2, false));
        System.out.print(r.table());
        assertTrue(r.passed(), r.table());
        assertTrue(r.checks().figures.get("grants") > 20, "the owners made progress: " + r.checks().figures);
        assertFalse(r.faults().isEmpty(), "faults were injected");
    }

    @Test
    void aResourceThatIgnoresTokensFailsTheRun() throws Exception {
        Chaos.Result r = Chaos.run(new Chaos.Options(25, SEED, 3, 2, true));
        System.out.print(r.table());
        assertFalse(r.passed(), "the checkers must catch the zombie writes of frozen owners: " + r.table());
        List<String> failures = r.checks().failures;
        assertTrue(failures.stream().anyMatch(f -> f.startsWith("lost updates")), failures.toString());
    }
}
