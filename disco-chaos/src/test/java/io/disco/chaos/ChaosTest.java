package io.disco.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The short runs that the README test command includes: every workload keeps the fencing contract
 * (zero safety failures) under faults; and the lock workload against a resource that ignores tokens
 * must fail, which shows the checkers can.
 */
class ChaosTest {

    private static final long SEED = 20261204L;

    @ParameterizedTest
    @ValueSource(strings = {"lock", "election", "rwlock", "semaphore", "runner"})
    void everyWorkloadKeepsTheFencingContractUnderFaults(String workload) throws Exception {
        Chaos.Result r = Chaos.run(new Chaos.Options(Workload.named(workload), 40, SEED, 4, false));
        System.out.print(r.table());
        assertTrue(r.passed(), r.table());
        assertTrue(r.report().figures.get("accepted writes") > 50, "the owners made progress: " + r.report().figures);
        assertFalse(r.faults().isEmpty(), "faults were injected");
        long steps = r.faults().stream().filter(f -> f.type().equals("step-clock-owner")).count();
        assertTrue(steps > 0, "a wall clock was stepped");
        assertEquals(steps, r.report().figures.get("wall-clock steps seen in the stepped owner's clock (of the steps)"),
                "every step reached its owner's wall clock");
    }

    @Test
    void aResourceThatIgnoresTokensFailsTheRun() throws Exception {
        Chaos.Result r = Chaos.run(new Chaos.Options(Workload.named("lock"), 25, SEED, 3, true));
        System.out.print(r.table());
        assertFalse(r.passed(), "the checkers must catch the zombie writes of frozen owners: " + r.table());
        List<String> failures = r.report().failures;
        assertTrue(failures.stream().anyMatch(f -> f.startsWith("lost updates")), failures.toString());
    }
}
